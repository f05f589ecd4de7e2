# k32_pod.cmake - build rules for pods: freestanding C compiled to wasm32.
#
#   k32_add_pod(NAME <name> SOURCES <c files...> [INCLUDES <dirs...>] [STACK_BYTES <n>]
#               [INITIAL_MEMORY <bytes>])
#
# produces ${CMAKE_CURRENT_BINARY_DIR}/<name>.wasm and a target <name>_wasm (part of `all`).
# Each source is compiled with clang --target=wasm32 -Oz -ffreestanding, then linked with
# wasm-ld called DIRECTLY, not through the clang driver: the driver silently runs binaryen's
# wasm-opt on the output when wasm-opt is on PATH (design.md §4), which would make a pod
# depend on what is installed. So no wasm-opt pass is ever applied; the name section is kept
# for trap messages. Measured on the driver pods (docs/hardware.md, "Measured"): wasm-opt -Oz
# saves 15-20 % of a driver's module bytes only by inlining the compensation steps the
# drivers keep apart on purpose; with inlining off it saves ~680 B each, 80 % of it in the
# .wasm file. Not worth a second optimiser and a build dependency. The shadow stack comes first in linear memory (--stack-first) so a
# stack overflow traps on address 0-underflow instead of corrupting data.
#
# K32_POD_TOOLCHAIN_FOUND tells callers whether pods can be built here (clang + wasm-ld).

find_program(K32_WASM_CC NAMES clang clang-14)
find_program(K32_WASM_LD NAMES wasm-ld wasm-ld-14)
if(K32_WASM_CC AND K32_WASM_LD)
	set(K32_POD_TOOLCHAIN_FOUND TRUE)
else()
	set(K32_POD_TOOLCHAIN_FOUND FALSE)
	message(STATUS "kube32: clang or wasm-ld missing; Wasm pods will not be built (scripts/deps.sh installs them)")
endif()

set(K32_SDK_DIR ${CMAKE_CURRENT_LIST_DIR})

function(k32_add_pod)
	cmake_parse_arguments(P "" "NAME;STACK_BYTES;INITIAL_MEMORY" "SOURCES;INCLUDES" ${ARGN})
	if(NOT K32_POD_TOOLCHAIN_FOUND)
		return()
	endif()
	if(NOT P_STACK_BYTES)
		set(P_STACK_BYTES 4096)
	endif()
	if(NOT P_INITIAL_MEMORY)
		set(P_INITIAL_MEMORY 65536)
	endif()
	set(cflags --target=wasm32 -Oz -ffreestanding -nostdlib -fno-exceptions
		-Wall -Wextra -Werror -std=c11 -I${K32_SDK_DIR})
	foreach(inc ${P_INCLUDES})
		list(APPEND cflags -I${inc})
	endforeach()
	set(objs)
	foreach(src ${P_SOURCES} ${K32_SDK_DIR}/k32_libc.c ${K32_SDK_DIR}/k32_fmt.c)
		get_filename_component(base ${src} NAME_WE)
		get_filename_component(abs ${src} ABSOLUTE)
		set(obj ${CMAKE_CURRENT_BINARY_DIR}/${P_NAME}_pod/${base}.o)
		add_custom_command(OUTPUT ${obj}
			COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/${P_NAME}_pod
			COMMAND ${K32_WASM_CC} ${cflags} -c ${abs} -o ${obj}
			DEPENDS ${abs} ${K32_SDK_DIR}/k32.h ${K32_SDK_DIR}/k32_klet.h
			COMMENT "pod ${P_NAME}: compiling ${base}.c to wasm32"
			VERBATIM)
		list(APPEND objs ${obj})
	endforeach()
	set(out ${CMAKE_CURRENT_BINARY_DIR}/${P_NAME}.wasm)
	add_custom_command(OUTPUT ${out}
		COMMAND ${K32_WASM_LD} --no-entry --stack-first -z stack-size=${P_STACK_BYTES}
			--initial-memory=${P_INITIAL_MEMORY} --allow-undefined-file=${K32_SDK_DIR}/k32_imports.txt
			-o ${out} ${objs}
		DEPENDS ${objs} ${K32_SDK_DIR}/k32_imports.txt
		COMMENT "pod ${P_NAME}: linking ${P_NAME}.wasm (wasm-ld, no wasm-opt)"
		VERBATIM)
	add_custom_target(${P_NAME}_wasm ALL DEPENDS ${out})
endfunction()
