#!/usr/bin/env python3
"""The size table of `make mcu` (scripts/mcu.sh) and the checks on it.

  mcu_size.py --out OUT --boards "cardputer devkit cortexm" --budget-cmd CMD
      writes OUT/size.md: per board, text/data/bss of every subsystem's library; per image,
      text/data/bss in all and per subsystem (from the linker map), the largest functions,
      and the worst static stack path from each task's entry function (-fstack-usage and
      -fcallgraph-info=su). Fails (exit 1, "OVER BUDGET") when an image's .data + .bss exceed
      the board's K32_BOARD_STATIC_RAM_MAX (CMD board-value BOARD MACRO evaluates it).
  mcu_size.py --compare QEMU_OUT HOST_OUT
      the test-mcu check: every kernel's pod and native checksum on the MCU equal the host's.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

# task entry functions (the functions handed to task_create) and main
TASK_ENTRIES = ["main", "worker_main", "watcher_main", "loop", "service", "ctrl_task_main",
                "relay_main", "api_ns_janitor_main", "Reset_Handler"]
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
        if "libk32_" in src:
            owner = re.search(r"libk32_(\w+)\.a", src).group(1)
        elif "main_" in src or "startup_" in src or "k32_platform_baremetal" in src:
            owner = "platform (baremetal, image main)"
        elif "bench_wasm.o" in src:
            owner = "bench pod (data)"
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


def stack_graph(objdir):
    """Frame bytes per function and direct call edges, from GCC's -fcallgraph-info=su files
    (.ci, one per object). Static functions are named "file:function" there."""
    frames, edges = {}, {}
    node = re.compile(r'node: \{ title: "([^"]+)" label: "[^"\\]*\\n[^"\\]*\\n(\d+) bytes')
    edge = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
    for ci in glob.glob(os.path.join(objdir, "**", "*.ci"), recursive=True):
        txt = open(ci, errors="replace").read()
        for m in node.finditer(txt):
            frames[m.group(1)] = max(frames.get(m.group(1), 0), int(m.group(2)))
        for m in edge.finditer(txt):
            edges.setdefault(m.group(1), set()).add(m.group(2))
    return frames, edges


def worst_path(fn, frames, edges):
    """Deepest static stack from fn along direct calls (a recursive cycle is cut where it
    closes and marked); returns (bytes, path)."""
    memo = {}

    def go(f, onpath):
        if f in memo:
            return memo[f]
        own = frames.get(f, 0)
        best, bpath = 0, []
        for g in edges.get(f, ()):
            if g in onpath:
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
        frames, edges = stack_graph(bo)
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
                md.append(f"Third-party symbols left unresolved (cJSON, http-parser, zlib, mbedTLS "
                          f"have no Arm build in Debian; their code is NOT in these figures): "
                          f"{nundef}.")
            md += ["", "| Subsystem in the image | text | data | bss |", "| --- | ---: | ---: | ---: |"]
            per = map_by_subsystem(os.path.join(bo, name + ".map"))
            for owner in sorted(per, key=lambda o: -(per[o]["text"] + per[o]["data"] + per[o]["bss"])):
                r = per[owner]
                md.append(f"| {owner} | {r['text']} | {r['data']} | {r['bss']} |")
            md += ["", "Largest functions:", "", "| Function | bytes |", "| --- | ---: |"]
            for sz, fn in largest_functions(elf):
                md.append(f"| `{fn}` | {sz} |")
            md += ["", "Worst static stack path per task entry (direct calls; calls through "
                   "function pointers and third-party code not followed; a recursive call is "
                   "counted once):", "", "| Task entry | bytes | path |", "| --- | ---: | --- |"]
            syms = set(l.split()[-1] for l in run(["arm-none-eabi-nm", elf]).splitlines() if l.split())
            for title in sorted(frames):
                entry = title.rsplit(":", 1)[-1]
                if entry not in TASK_ENTRIES or entry not in syms:
                    continue
                sz, path = worst_path(title, frames, edges)
                path = [p.rsplit(":", 1)[-1] for p in path]
                shown = " > ".join(path[:8]) + (" > ..." if len(path) > 8 else "")
                md.append(f"| `{title}` | {sz} | {shown} |")
            md.append("")
    open(args.md or os.path.join(out, "size.md"), "w").write("\n".join(md) + "\n")
    if not args.md:
        print("\n".join(md))
    for o in over:
        print("mcu: OVER BUDGET: " + o + "; lower the board's limits or its planned heap "
              "(include/k32/boards/)", file=sys.stderr)
    return 1 if over else 0


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
    ap.add_argument("--md", help="write the table here instead of OUT/size.md (self-test)")
    ap.add_argument("--compare", nargs=2)
    a = ap.parse_args()
    if a.compare:
        return compare(*a.compare)
    return table(a)


if __name__ == "__main__":
    sys.exit(main())
