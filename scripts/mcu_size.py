#!/usr/bin/env python3
"""The size table of `make mcu` (scripts/mcu.sh) and the checks on it.

  mcu_size.py --out OUT --boards "cardputer devkit cortexm" --budget-cmd CMD
      writes OUT/size.md: per board, text/data/bss of every subsystem's library; per image,
      text/data/bss in all and per subsystem (from the linker map), the largest functions,
      and the worst static stack path from each task's entry function (-fstack-usage and
      -fcallgraph-info=su; the third-party objects' too with --thirdparty). Fails (exit 1,
      "OVER BUDGET") when an image's .data + .bss exceed the board's K32_BOARD_STATIC_RAM_MAX
      (CMD board-value BOARD MACRO evaluates it), when a task's worst path exceeds its stack,
      or when a task's stack exceeds 16 KiB.
  mcu_size.py --compare QEMU_OUT HOST_OUT [--drivers HOST_DRIVERS]
      the test-mcu check: every kernel's pod and native checksum on the MCU equal the host's;
      with --drivers, the driver pods' reading lines equal the host run's.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

# task entry functions (the functions handed to task_create) and main, with the stack each
# gets on a board: a k32_config.h macro (evaluated for the board) or None for the main stack
# and the tasks created with stack 0 (the platform's default), both MAIN_STACK_BYTES: the
# bare-metal port runs every task on the main stack (cortexm.ld's 16 KiB), and a FreeRTOS
# port would give a task created with 0 the same.
MAIN_STACK_BYTES = 16 * 1024
TASK_ENTRIES = {
    "Reset_Handler": None, "main": None,
    "src/kubelet/klet.c:watcher_main": "K32_KLET_WATCHER_STACK_BYTES",
    "src/kubelet/klet.c:node_main": "K32_KLET_NODE_TASK_STACK",
    "src/kubelet/klet.c:worker_main": "K32_BOARD_INTERP_STACK_BYTES",
    "src/http/http_server.c:loop": None, "src/http/http_server.c:worker_main": None,
    "src/kobj/kobj_timer.c:service": None,
    "src/api/api_delete.c:api_ns_janitor_main": None,
    "src/ctrl/ctrl.c:ctrl_task_main": None,
    "src/ctrl/ctrl_inform.c:ctrl_inf_main": "K32_CTRL_INFORMER_STACK_BYTES",
    "src/cplane/cplane_logs.c:relay_main": "K32_CPLANE_RELAY_STACK_BYTES",
}
# the bound: no task stack over 16 KiB
TASK_STACK_MAX = 16 * 1024
# Calls through function pointers that the static graph cannot see but a task makes: the
# HTTP server's handler (the control plane's API, the kubelet's pod server) and the client
# layer's transports (in-process API calls, HTTP). Followed when the callee is in the image.
INDIRECT_CALLS = {
    "src/http/http_server.c:handle_request": ["src/cplane/cplane.c:cp_handler",
                                              "src/kubelet/klet_http.c:handler"],
    "kclient_do": ["src/kclient/kclient_inproc.c:kc_in_request",
                   "src/kclient/kclient.c:kc_http_request"],
    "kclient_watch": ["src/kclient/kclient_inproc.c:kc_in_watch",
                      "src/kclient/kclient.c:kc_http_watch"],
}
SECTION_OWNER = re.compile(r"libk32_(\w+)\.a\((\S+)\)|/obj/(\w+)/|main_\w+\.o|startup_\w+\.o|bench_wasm\.o")


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def size_of(path):
    """(text, data, bss) totals of an archive or an ELF (Berkeley format)."""
    t = d = b = 0
    for line in run(["arm-none-eabi-size", "-B", path]).splitlines()[1:]:
        f = line.split()
        if len(f) >= 3 and f[0].isdigit():
            t, d, b = t + int(f[0]), d + int(f[1]), b + int(f[2])
    return t, d, b


def map_by_subsystem(map_path):
    """text/data/bss per subsystem of a linked image, from its linker map's input sections."""
    out = {}
    lines = open(map_path, errors="replace").read().split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith("Linker script and memory map")), 0)
    pending = None
    for l in lines[start:]:
        m = re.match(r"^ (\.\S+)\s*$", l)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)", l)
        if not m:
            pending = None
            continue
        sec = m.group(1) or pending
        pending = None
        if not sec:
            continue
        size = int(m.group(3), 16)
        if size == 0 or int(m.group(2), 16) == 0 and not sec.startswith(".text"):
            continue
        src = m.group(4)
        if "libtp_" in src:
            owner = "third-party: " + re.search(r"libtp_([\w-]+)\.a", src).group(1) + " (Debian source)"
        elif "libk32_" in src:
            owner = re.search(r"libk32_(\w+)\.a", src).group(1)
        elif "main_" in src or "startup_" in src or "k32_platform_baremetal" in src or \
                "mcu_drivers.o" in src:
            owner = "platform (baremetal, image main)"
        elif "_wasm.o" in src:
            owner = "pods (bench, drivers; data)"
        elif "libc" in src or "libm" in src or "librdimon" in src or "libgcc" in src or "libnosys" in src:
            owner = "newlib, libgcc"
        else:
            owner = "other"
        kind = "text" if sec.startswith((".text", ".rodata", ".isr_vector", ".ARM")) else \
            "bss" if sec.startswith((".bss", "COMMON")) else "data" if sec.startswith(".data") else None
        if kind is None:
            continue
        out.setdefault(owner, {"text": 0, "data": 0, "bss": 0})[kind] += size
    return out


def largest_functions(elf, n=10):
    rows = []
    for line in run(["arm-none-eabi-nm", "-S", "--size-sort", "--radix=d", elf]).splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            rows.append((int(f[1]), f[3]))
    return sorted(rows, reverse=True)[:n]


def stack_graph(*objdirs):
    """Frame bytes per function and direct call edges, from GCC's -fcallgraph-info=su files
    (.ci, one per object). Static functions are named "file:function" there."""
    frames, edges = {}, {}
    node = re.compile(r'node: \{ title: "([^"]+)" label: "[^"\\]*\\n[^"\\]*\\n(\d+) bytes')
    edge = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
    cis = [c for d in objdirs if d for c in glob.glob(os.path.join(d, "**", "*.ci"), recursive=True)]
    for ci in cis:
        txt = open(ci, errors="replace").read()
        for m in node.finditer(txt):
            frames[m.group(1)] = max(frames.get(m.group(1), 0), int(m.group(2)))
        for m in edge.finditer(txt):
            edges.setdefault(m.group(1), set()).add(m.group(2))
    return frames, edges


def worst_path(fn, frames, edges, linked=None):
    """Deepest static stack from fn along direct calls and INDIRECT_CALLS (a recursive cycle
    is cut where it closes); with linked (the image's symbols), only through functions the
    image holds. Returns (bytes, path)."""
    memo = {}

    def go(f, onpath):
        if f in memo:
            return memo[f]
        own = frames.get(f, 0)
        best, bpath = 0, []
        for g in set(edges.get(f, ())) | set(INDIRECT_CALLS.get(f, ())):
            if g in onpath:
                continue
            if linked is not None and g in frames and g.rsplit(":", 1)[-1] not in linked:
                continue
            s, p = go(g, onpath | {g})
            if s > best:
                best, bpath = s, p
        memo[f] = (own + best, [f] + bpath)
        return memo[f]
    return go(fn, {fn})


def kb(n):
    return f"{n / 1024:.1f} KiB"


def table(args):
    out = args.out
    md = ["# kube32 on a Cortex-M4F: sizes (generated by `make mcu`, scripts/mcu.sh)", "",
          "arm-none-eabi-gcc " + run(["arm-none-eabi-gcc", "-dumpversion"]).strip() +
          ", -mcpu=cortex-m4 -mfloat-abi=hard, newlib-nano, -Os, -ffunction-sections, "
          "--gc-sections. Bytes.", ""]
    over = []
    for b in args.boards.split():
        bo = os.path.join(out, b)
        if not os.path.isdir(bo):
            continue
        val = lambda m: int(run(args.budget_cmd.split() + [b, m]).strip())
        sram, static_max, heap = val("K32_BOARD_SRAM_BYTES"), val("K32_BOARD_STATIC_RAM_MAX"), \
            val("K32_BOARD_HEAP_PLANNED_BYTES")
        if os.environ.get("MCU_STATIC_RAM_MAX_OVERRIDE"):
            static_max = int(os.environ["MCU_STATIC_RAM_MAX_OVERRIDE"])
        md += [f"## Board `{b}` (include/k32/boards/{b}.h)", "",
               f"SRAM {sram} B; planned heap at the pods stage {heap} B; static RAM budget "
               f"(.data + .bss) {static_max} B.", "",
               "### Libraries (every object, before --gc-sections)", "",
               "| Subsystem | text | data | bss |", "| --- | ---: | ---: | ---: |"]
        for lib in sorted(glob.glob(os.path.join(bo, "lib", "libk32_*.a"))):
            t, d, s = size_of(lib)
            md.append(f"| {os.path.basename(lib)[7:-2]} | {t} | {d} | {s} |")
        md.append("")
        frames, edges = stack_graph(bo, args.thirdparty and os.path.join(args.thirdparty, "obj"))
        for elf in sorted(glob.glob(os.path.join(bo, "*.elf"))):
            name = os.path.basename(elf)[:-4]
            t, d, s = size_of(elf)
            static = d + s
            verdict = "within budget" if static <= static_max else "OVER BUDGET"
            if static > static_max:
                over.append(f"{b}/{name}: .data + .bss = {static} B > K32_BOARD_STATIC_RAM_MAX = "
                            f"{static_max} B")
            undef = os.path.join(bo, name + ".undefined")
            nundef = len([l for l in open(undef) if l.strip()]) if os.path.exists(undef) else 0
            md += [f"### Image `{name}` ({b})", "",
                   f"text {t}, data {d}, bss {s}: static RAM {static} B of {static_max} B "
                   f"({verdict}); static RAM + planned heap {static + heap} B of {sram} B SRAM, "
                   f"{kb(sram - static - heap)} left for the system."]
            if nundef:
                md.append(f"Third-party symbols left unresolved (cJSON, http-parser, mbedTLS: "
                          f"their Debian sources could not be fetched and cross-compiled; their "
                          f"code is NOT in these figures): {nundef}.")
            md += ["", "| Subsystem in the image | text | data | bss |", "| --- | ---: | ---: | ---: |"]
            per = map_by_subsystem(os.path.join(bo, name + ".map"))
            for owner in sorted(per, key=lambda o: -(per[o]["text"] + per[o]["data"] + per[o]["bss"])):
                r = per[owner]
                md.append(f"| {owner} | {r['text']} | {r['data']} | {r['bss']} |")
            md += ["", "Largest functions:", "", "| Function | bytes |", "| --- | ---: |"]
            for sz, fn in largest_functions(elf):
                md.append(f"| `{fn}` | {sz} |")
            md += ["", "Worst static stack path per task entry (direct calls and the known "
                   "calls through function pointers (INDIRECT_CALLS: HTTP handlers, client "
                   "transports), third-party code included; a recursive call is counted "
                   "once) against the task's stack (checked: the path must fit "
                   f"the stack, and no stack may exceed {TASK_STACK_MAX} B):", "",
                   "| Task entry | worst path | stack | path |", "| --- | ---: | ---: | --- |"]
            syms = set(l.split()[-1] for l in run(["arm-none-eabi-nm", elf]).splitlines() if l.split())
            for title in sorted(frames):
                entry = title.rsplit(":", 1)[-1]
                if title not in TASK_ENTRIES or entry not in syms:
                    continue
                sz, path = worst_path(title, frames, edges, syms)
                macro = TASK_ENTRIES[title]
                stack = val(macro) if macro else MAIN_STACK_BYTES
                if os.environ.get("MCU_TASK_STACK_OVERRIDE"):
                    stack = int(os.environ["MCU_TASK_STACK_OVERRIDE"])
                path = [p.rsplit(":", 1)[-1] for p in path]
                shown = " > ".join(path[:8]) + (" > ..." if len(path) > 8 else "")
                flag = ""
                if sz > stack or stack > TASK_STACK_MAX:
                    flag = " **OVER**"
                    over.append(f"{b}/{name}: task {title}: worst static stack path {sz} B, "
                                f"stack {stack} B ({macro or 'main stack / platform default'}), "
                                f"at most {TASK_STACK_MAX} B allowed")
                md.append(f"| `{title}` | {sz} | {stack}{flag} | {shown} |")
            md.append("")
    open(args.md or os.path.join(out, "size.md"), "w").write("\n".join(md) + "\n")
    if not args.md:
        print("\n".join(md))
    for o in over:
        print("mcu: OVER BUDGET: " + o + "; lower the board's limits or its planned heap "
              "(include/k32/boards/), or move large buffers off the task's stack",
              file=sys.stderr)
    return 1 if over else 0


# what the driver run must show (mcu_drivers.c's script): every step of every pod
DRIVER_STEPS = ["worked-example", "values-changed", "card7-placed", "card-removed", "card4-placed"]
DRIVER_PODS = ["bme688", "miniscale", "rfid"]


def compare_drivers(qemu_out, host_out):
    """The K32_DRV lines of the QEMU run equal the host's, line for line, and cover every
    step of every pod with readings."""
    pick = lambda path: [l.strip() for l in open(path) if l.startswith(("K32_DRV ", "K32_DRV_FAIL"))]
    mcu, host = pick(qemu_out), pick(host_out)
    bad = 0
    for i in range(max(len(mcu), len(host))):
        a = mcu[i] if i < len(mcu) else "(missing)"
        b = host[i] if i < len(host) else "(missing)"
        if a != b:
            bad += 1
            print(f"test-mcu: driver line {i + 1} differs:\n  mcu:  {a}\n  host: {b}",
                  file=sys.stderr)
    want = {(s, p) for s in DRIVER_STEPS for p in DRIVER_PODS}
    seen = set()
    for l in mcu:
        m = re.match(r"K32_DRV step=(\S+) pod=(\S+) ready=1 reason=\S+ publishes=[1-9]\d* \S+=", l)
        if m:
            seen.add(m.groups())
    missing = sorted(want - seen)
    if missing or bad or any(l.startswith("K32_DRV_FAIL") for l in mcu):
        print(f"test-mcu: drivers FAILED ({bad} lines differ; steps without a Ready pod and "
              f"readings: {missing})", file=sys.stderr)
        return 1
    for l in mcu:
        print("test-mcu: " + l[8:])
    print(f"test-mcu: all {len(mcu)} driver reading lines ({len(DRIVER_PODS)} pods x "
          f"{len(DRIVER_STEPS)} steps) equal to the host build's")
    return 0


def compare(qemu_out, host_out):
    host = dict(l.split() for l in open(host_out) if l.strip())
    seen, bad = 0, 0
    for l in open(qemu_out):
        m = re.match(r"K32_MCU kernel=(\w+) n=(\d+) pod=(0x[0-9a-f]+) native=(0x[0-9a-f]+)"
                     r" pod_us=(\d+) native_us=(\d+)", l.strip())
        if not m:
            continue
        seen += 1
        k, _, pod, nat, pus, nus = m.groups()
        ok = pod == nat == host.get(k)
        bad += not ok
        print(f"test-mcu: {k}: pod {pod} native-on-mcu {nat} host {host.get(k)} "
              f"{'OK' if ok else 'MISMATCH'}; pod ~{int(pus) * 1000:,} instructions, native "
              f"~{int(nus) * 1000:,} (QEMU icount shift=0)")
    if seen != len(host) or bad:
        print(f"test-mcu: FAILED ({seen} of {len(host)} kernels reported, {bad} mismatches)",
              file=sys.stderr)
        return 1
    print(f"test-mcu: all {seen} kernels equal to the host build's")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--boards", default="cardputer devkit cortexm")
    ap.add_argument("--budget-cmd")
    ap.add_argument("--thirdparty", help="OUT/thirdparty: its objects' call graphs too")
    ap.add_argument("--md", help="write the table here instead of OUT/size.md (self-test)")
    ap.add_argument("--compare", nargs=2)
    ap.add_argument("--drivers", help="with --compare: the host's driver run to compare with")
    a = ap.parse_args()
    if a.compare:
        rc = compare(*a.compare)
        if a.drivers:
            rc |= compare_drivers(a.compare[0], a.drivers)
        return rc
    return table(a)


if __name__ == "__main__":
    sys.exit(main())
