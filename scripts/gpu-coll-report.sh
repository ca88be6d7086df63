#!/usr/bin/env bash
# gpu-coll-report.sh - resource report of the GPU collective kernels (collectives/gpu/coll_gpu.cu, issue 6).
#
#   scripts/gpu-coll-report.sh [OUTPUT.md]        (default docs/gpu-collectives-resources.md)
#
# Builds every kernel variant (fcollect/alltoall x naive/hoisted x W in {2, 4, 8, generic} x G in {1, 2, 4, 8} x
# pipelined or not) twice:
#   sm_90  with nvcc -Xptxas -v (registers, spill stores/loads, stack) and disassembles it (cuobjdump -sass, or nvdisasm);
#   gfx90a with hipcc -Rpass-analysis=kernel-resource-usage --save-temps (VGPR, SGPR, scratch, occupancy; AMDGCN ISA).
# From the disassembly it finds the tile loop of each kernel (the outermost loop holding the 16-byte data stores) and
# counts inside it the 64-bit loads of heap bases (global: LDG/LD .64, global/flat/s_load dwordx2; shared: LDS.64,
# ds_read_b64), the 16-byte data loads and stores, and whether a destination loop is left inside the chunk loop.
# Tools: NVCC (default nvcc on PATH or /usr/local/cuda/bin), HIPCC (hipcc), CUOBJDUMP or NVDISASM. CUDA 13's cubins
# carry ELF ABI v8 headers that older disassemblers refuse: with an older nvdisasm (e.g. the one in Debian's non-free
# nvidia-cuda-toolkit 11.8, which reads sm_90 code) the script rewrites a copy's header to the v7 layout first; that
# touches only the header, never the code. Without any disassembler the counts are left out (marked n/a).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/gpu-collectives-resources.md}
src=collectives/gpu/coll_gpu.cu
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
HIPCC=${HIPCC:-$(command -v hipcc || true)}
work=$(mktemp -d /tmp/gpu-coll-report.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "gpu-coll-report: nvcc sm_90 ($NVCC)" >&2
"$NVCC" -std=c++17 -O3 -arch=sm_90 -Icollectives/gpu -Xptxas -v -cubin -o "$work/coll.cubin" "$src" \
  2>"$work/ptxas.txt"
nvcc_version=$("$NVCC" --version | tail -2 | head -1)

sass_tool=none
dis=${CUOBJDUMP:-$(command -v cuobjdump || true)}
[ -z "$dis" ] && [ -x /usr/local/cuda/bin/cuobjdump ] && dis=/usr/local/cuda/bin/cuobjdump
if [ -n "$dis" ] && "$dis" -sass "$work/coll.cubin" >"$work/sass.txt" 2>/dev/null && grep -q 'STG\|ST\.E' "$work/sass.txt"; then
  sass_tool="cuobjdump -sass ($("$dis" --version | tail -1))"
else
  nvd=${NVDISASM:-$(command -v nvdisasm || true)}
  for c in /usr/local/cuda/bin/nvdisasm /opt/cuda118-tools/x/usr/bin/nvdisasm; do
    [ -z "$nvd" ] && [ -x "$c" ] && nvd=$c
  done
  if [ -n "$nvd" ]; then
    if ! "$nvd" -c "$work/coll.cubin" >"$work/sass.txt" 2>/dev/null; then
      # An older nvdisasm: rewrite a copy's ELF header to ABI v7; then replace every instruction it cannot decode (it
      # skips them silently, with any label on them) by a NOP, so that branch targets stay visible.
      python3 - "$work/coll.cubin" "$work/coll_v7.cubin" "$nvd" "$work/undecoded.txt" <<'PY'
import collections, re, struct, subprocess, sys
src, dst, nvd, note = sys.argv[1:5]
b = bytearray(open(src, 'rb').read())
assert b[:4] == b'\x7fELF' and b[4] == 2, 'not an ELF64 cubin'
flags = struct.unpack_from('<I', b, 48)[0]
sm = (flags >> 8) & 0xff if b[8] >= 8 else flags & 0xff   # ABI v8 keeps the SM in bits 8..15
b[8] = 7                                                  # ABI version 7 header (CUDA <= 12)
struct.pack_into('<I', b, 48, (sm << 16) | 0x500 | sm)    # EF_CUDA_VIRTUAL_SM(sm) | 64-bit | texmode unified | sm
shoff = struct.unpack_from('<Q', b, 0x28)[0]
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
secs = [struct.unpack_from('<IIQQQQ', b, shoff + i * shentsize) for i in range(shnum)]
stro = secs[shstrndx][4]
name = lambda n: b[stro + n:b.index(b'\0', stro + n)].decode()
text = {name(s[0]): (s[4], s[5]) for s in secs if name(s[0]).startswith('.text.')}
open(dst, 'wb').write(b)
seen, cur = collections.defaultdict(set), None
for line in subprocess.run([nvd, '-c', dst], capture_output=True, text=True, check=True).stdout.splitlines():
    m = re.match(r'\s*(\.text\.\S+):$', line)
    if m: cur = m.group(1); continue
    m = re.search(r'/\*([0-9a-f]{4,})\*/\s+\S', line)
    if m and cur: seen[cur].add(int(m.group(1), 16))
ops = collections.Counter()
for sec, (off, size) in text.items():
    for a in range(0, size, 16):
        if a not in seen[sec]:
            ops[hex(struct.unpack_from('<Q', b, off + a)[0] & 0xfff)] += 1
            struct.pack_into('<QQ', b, off + a, 0x7918, 0x000fc00000000000)  # NOP
open(dst, 'wb').write(b)
open(note, 'w').write(', '.join(f'{n} x opcode {o}' for o, n in ops.most_common()) or 'none')
PY
      "$nvd" -c "$work/coll_v7.cubin" >"$work/sass.txt"
      sass_tool="nvdisasm -c ($("$nvd" --version | tail -1 | sed 's/^Cuda compilation tools, //'); a copy's header rewritten to ELF ABI v7; instructions it cannot decode shown as NOP: $(cat "$work/undecoded.txt"), on sm_90 VIADD, an integer add that CUDA 11.8 did not emit yet)"
    else
      sass_tool="nvdisasm -c ($("$nvd" --version | tail -1))"
    fi
  else
    : >"$work/sass.txt"
    echo "gpu-coll-report: no cuobjdump or nvdisasm: SASS counts left out" >&2
  fi
fi

gcn_tool=none
: >"$work/remarks.txt"
: >"$work/gcn.s"
if [ -n "$HIPCC" ]; then
  echo "gpu-coll-report: hipcc gfx90a ($HIPCC)" >&2
  (cd "$work" && "$HIPCC" -std=c++17 -O3 -x hip --offload-arch=gfx90a -I"$OLDPWD/collectives/gpu" \
     -Rpass-analysis=kernel-resource-usage --save-temps -c "$OLDPWD/$src" -o coll_hip.o 2>remarks.txt)
  cp "$work"/coll_gpu-hip-amdgcn-amd-amdhsa-gfx90a.s "$work/gcn.s"
  hip_version=$( ("$HIPCC" --version 2>/dev/null || true) | grep -m1 -i 'HIP version' || true)
  gcn_tool="hipcc --save-temps (${hip_version:-HIP})"
fi

python3 - "$work" "$out" "$nvcc_version" "$sass_tool" "$gcn_tool" <<'PY'
import datetime, re, sys
from collections import defaultdict
work, out, nvcc_version, sass_tool, gcn_tool = sys.argv[1:6]
VPT = 4
KRE = re.compile(r'coll_kernelILi(\d)ELi(\d)ELi(\d)ELi(\d)E(5uint4|15HIP_vector_typeIjLj4EE|h)(?:Li(\d)E)?E')

def key(mangled):
    m = KRE.search(mangled)
    if not m: return None
    op, var, w, g, v, p = m.groups()
    return (int(op), int(var), int(w), int(g), 16 if v != 'h' else 1, int(p or 0))

# ---- ptxas -v ----
ptx = {}
cur = None
for line in open(f'{work}/ptxas.txt'):
    m = re.search(r"Compiling entry function '(\S+)'", line)
    if m: cur = key(m.group(1)); continue
    m = re.search(r'(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads', line)
    if m and cur: ptx.setdefault(cur, {}).update(stack=int(m.group(1)), spst=int(m.group(2)), spld=int(m.group(3)))
    m = re.search(r'Used (\d+) registers', line)
    if m and cur: ptx.setdefault(cur, {})['regs'] = int(m.group(1))

# ---- SASS: loops are backward branches; the tile loop is the outermost loop holding 16-byte stores ----
def sass_functions(text):
    funcs, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r'\s*\.text\.(\S+):$', line) or re.match(r'\s*Function : (\S+)$', line)
        if m:
            if name: funcs[name] = body
            name, body = m.group(1), []
        elif name is not None:
            body.append(line)
    if name: funcs[name] = body
    return funcs

INS = re.compile(r'/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);')
def sass_analyse(body):
    ins, labels, pending = [], {}, []
    for line in body:
        m = re.match(r'(\.L_x_\d+):', line.strip())
        if m: pending.append(m.group(1)); continue
        m = INS.search(line)
        if m:
            a = int(m.group(1), 16)
            for l in pending: labels[l] = a
            pending = []
            ins.append((a, m.group(2), m.group(3)))
    loops = {}
    for a, op, rest in ins:
        if op.startswith('BRA'):
            t = re.search(r'\((\.L_x_\d+)\)', rest)
            if t and t.group(1) in labels and labels[t.group(1)] <= a:
                s = labels[t.group(1)]
                loops[s] = max(loops.get(s, 0), a)
    st = lambda op: re.match(r'STG?\.E\.128', op)
    data_loops = [(s, e) for s, e in loops.items() if any(s <= a <= e and st(op) for a, op, _ in ins)]
    if not data_loops: return None
    tile = max(data_loops, key=lambda r: r[1] - r[0])
    inner = [r for r in data_loops if r != tile and tile[0] <= r[0] and r[1] <= tile[1]]
    depth = 1 + (1 if inner else 0) + (1 if any(any(q != r and r[0] <= q[0] and q[1] <= r[1] for q in inner) for r in inner) else 0)
    inside = [(a, op) for a, op, _ in ins if tile[0] <= a <= tile[1]]
    c = dict(base_g=sum(1 for _, op in inside if re.match(r'LDG?\.E\.64', op)),
             base_s=sum(1 for _, op in inside if op.startswith('LDS.64')),
             ld=sum(1 for _, op in inside if re.match(r'LDG?\.E\.128', op)),
             st=sum(1 for _, op in inside if st(op)),
             volatile=sum(1 for _, op in inside if re.match(r'LDG?\.E\.64\.STRONG\.SYS', op)),
             before=sum(1 for a, op, _ in ins if a < tile[0] and re.match(r'LDG?\.E\.64', op)),
             depth=depth)
    return c

sass = {}
for name, body in sass_functions(open(f'{work}/sass.txt').read()).items():
    k = key(name)
    if k: sass[k] = sass_analyse(body)

# ---- hipcc remarks ----
gcn_res = {}
cur = None
for line in open(f'{work}/remarks.txt'):
    m = re.search(r'Function Name: (\S+)', line)
    if m: cur = key(m.group(1)); continue
    m = re.search(r'remark: .*?:\s+([A-Za-z ]+?)(?: \[[^\]]*\])?: (\d+) \[-Rpass', line)
    if m and cur: gcn_res.setdefault(cur, {})[m.group(1).strip()] = int(m.group(2))

# ---- AMDGCN: loops from LLVM's block comments ----
def gcn_analyse(lines):
    blocks, cur, order = {}, 'entry', ['entry']
    blocks['entry'] = dict(header=None, depth=0, parent=None, ins=[])
    for line in lines:
        m = re.match(r'\.L(BB\d+_\d+):|; %(bb\.\d+):', line)   # a labelled block, or a fall-through one
        if m:
            cur = m.group(1) or m.group(2)
            blocks[cur] = dict(header=None, depth=0, parent=None, ins=[])
            order.append(cur)
            line = line[m.end():]
        s = line.strip()
        if s.startswith(';'):
            b = blocks[cur]
            m = re.search(r'Parent Loop (BB\d+_\d+) Depth=(\d+)', s)
            if m: b.setdefault('parents', []).append((int(m.group(2)), m.group(1)))
            m = re.search(r'This (?:Inner )?Loop Header: Depth=(\d+)', s)
            if m: b['header'], b['depth'] = cur, int(m.group(1))
            m = re.search(r'in Loop: Header=(BB\d+_\d+) Depth=(\d+)', s)
            if m: b['header'], b['depth'] = m.group(1), int(m.group(2))
            continue
        if s and not s.startswith('.') and not s.endswith(':'):
            blocks[cur]['ins'].append(s.split()[0])
    parent = {}
    for name, b in blocks.items():
        if b['header'] == name:
            ps = sorted(b.get('parents', []))
            parent[name] = ps[-1][1] if ps else None
    def chain(h):
        while h:
            yield h
            h = parent.get(h)
    st = lambda op: re.match(r'(flat|global)_store_dwordx4', op)
    in_loop = defaultdict(list)
    for name, b in blocks.items():
        for h in chain(b['header']):
            in_loop[h].extend(b['ins'])
    data = [h for h, ins in in_loop.items() if any(st(op) for op in ins)]
    if not data: return None
    depth = {h: blocks[h]['depth'] for h in data}
    tile = min(data, key=lambda h: depth[h])
    inside = in_loop[tile]
    return dict(base_g=sum(1 for op in inside if re.match(r'(flat|global)_load_dwordx2|s_load_dwordx2', op)),
                base_s=sum(1 for op in inside if op.startswith('ds_read_b64')),
                ld=sum(1 for op in inside if re.match(r'(flat|global)_load_dwordx4', op)),
                st=sum(1 for op in inside if st(op)),
                depth=max(depth.values()) - depth[tile] + 1)

gcn = {}
fn, body = None, []
for line in open(f'{work}/gcn.s'):
    m = re.match(r'(_Z\S*coll_kernel\S*):\s*(;.*)?$', line)
    if m: fn, body = m.group(1), []; continue
    if fn and re.match(r'\.Lfunc_end\d+:', line):
        k = key(fn)
        if k: gcn[k] = gcn_analyse(body)
        fn = None
        continue
    if fn: body.append(line)

# ---- the table ----
OPS, VARS = ['fcollect', 'alltoall'], ['naive', 'hoisted']
rows = []
for op in (0, 1):
    for w in (2, 4, 8, 0):
        for var in (1, 0):
            for g in (1, 2, 4, 8):
                if w and g > w: continue
                for pipe in (0, 1):
                    rows.append((op, var, w, g, 16, pipe))
def wname(w): return str(w) if w else 'gen'
def fmt_sass(k):
    c = sass.get(k)
    if not c: return 'n/a', 'n/a', 'n/a', 'n/a'
    base = f"{c['base_g']}" + (f" (+{c['base_s']} LDS)" if c['base_s'] else '')
    dest = 'unrolled' if c['depth'] <= 2 else 'loop over groups'
    return base, str(c['ld']), str(c['st']), dest
def fmt_gcn(k):
    c = gcn.get(k)
    if not c: return 'n/a', 'n/a', 'n/a'
    base = f"{c['base_g']}" + (f" (+{c['base_s']} ds_read)" if c['base_s'] else '')
    dest = 'unrolled' if c['depth'] <= 2 else 'loop'
    return base, str(c['st']), dest

L = []
L.append('# GPU collective kernels: resources and disassembly counts\n')
L.append(f'Generated {datetime.date.today().isoformat()} by `scripts/gpu-coll-report.sh` (one command regenerates this '
         f'file) from `collectives/gpu/coll_gpu.cu`.\n')
L.append(f'- sm_90: {nvcc_version}, `-O3 -Xptxas -v`; SASS from {sass_tool}.')
L.append(f'- gfx90a: {gcn_tool}, `-O3 -Rpass-analysis=kernel-resource-usage`; AMDGCN ISA from `--save-temps`.')
L.append(f'- Block size {512} threads, {VPT} vectors of 16 bytes per thread per chunk (a 32 KiB chunk per block). '
         '*pipe* 1: the pipelined kernels (the next step\'s loads issued before this step\'s stores; one loop over '
         'this thread\'s chunks), 0: a chunk loop inside the tile loop.')
L.append('- Counts are static instructions inside the tile loop (the outermost loop that holds the 16-byte stores), '
         'nested loops included once. *Base loads*: 64-bit loads of heap bases inside that loop (global `LDG/LD.E.64`; '
         'gfx90a `flat/global_load_dwordx2`, `s_load_dwordx2`), shared-memory reads of the hoisted generic table in '
         'parentheses. *Dest loop*: "unrolled" when no loop is left inside the chunk loop.\n')
L.append('| op | variant | W | G | pipe | sm_90 regs | spill st/ld B | stack B | SASS base loads / tile | SASS 16-B loads | '
         'SASS 16-B stores | dest loop | gfx90a VGPR | SGPR | scratch B/lane | occupancy waves/SIMD | GCN base loads / tile | GCN 16-B stores | GCN dest loop |')
L.append('|' + '---|' * 19)
for k in rows:
    op, var, w, g, v, pipe = k
    p = ptx.get(k, {})
    r = gcn_res.get(k, {})
    sb, sl, ss, sd = fmt_sass(k)
    gb, gs, gd = fmt_gcn(k)
    L.append(f"| {OPS[op]} | {VARS[1 - var] if False else ('naive' if var else 'hoisted')} | {wname(w)} | {g} | {pipe} | "
             f"{p.get('regs', 'n/a')} | {p.get('spst', 'n/a')}/{p.get('spld', 'n/a')} | {p.get('stack', 'n/a')} | "
             f"{sb} | {sl} | {ss} | {sd} | {r.get('VGPRs', 'n/a')} | {r.get('SGPRs', 'n/a')} | "
             f"{r.get('ScratchSize', 'n/a')} | {r.get('Occupancy', 'n/a')} | {gb} | {gs} | {gd} |")

# summary: naive vs hoisted base loads per tile, per W (G = W or 4)
L.append('\n## Summary: loads of heap bases per tile iteration, naive against hoisted (sm_90 SASS / gfx90a ISA)\n')
L.append('| op | W | G | pipe | naive SASS | hoisted SASS | naive GCN | hoisted GCN |')
L.append('|---|---|---|---|---|---|---|---|')
for op in (0, 1):
    for w in (2, 4, 8, 0):
        for g in sorted({min(w, 4) if w else 4, 1}):
          for pipe in (0, 1):
            kn, kh = (op, 1, w, g, 16, pipe), (op, 0, w, g, 16, pipe)
            L.append(f'| {OPS[op]} | {wname(w)} | {g} | {pipe} | {fmt_sass(kn)[0]} | {fmt_sass(kh)[0]} | {fmt_gcn(kn)[0]} | '
                     f'{fmt_gcn(kh)[0]} |')
spills = [k for k in rows if ptx.get(k, {}).get('spst', 0) or ptx.get(k, {}).get('spld', 0)]
gspills = [k for k in rows if gcn_res.get(k, {}).get('VGPRs Spill', 0) or gcn_res.get(k, {}).get('SGPRs Spill', 0)]
L.append('')
L.append('Kernels that spill on sm_90: ' + (', '.join(f'{OPS[k[0]]} {"naive" if k[1] else "hoisted"} W={wname(k[2])} G={k[3]} pipe={k[5]}' for k in spills) or 'none') + '.')
L.append('Kernels that spill on gfx90a (SGPR spills go to VGPR lanes, VGPR spills to scratch): ' + (', '.join(f'{OPS[k[0]]} {"naive" if k[1] else "hoisted"} W={wname(k[2])} G={k[3]} pipe={k[5]} (SGPR {gcn_res[k].get("SGPRs Spill", 0)}, VGPR {gcn_res[k].get("VGPRs Spill", 0)})' for k in gspills) or 'none') + '.')
byte = [k for k in ptx if k[4] == 1]
if byte:
    L.append(f'Byte-path kernels (unaligned src, dst_off or nbytes; G = 1): {len(byte)}, sm_90 registers '
             f'{min(ptx[k].get("regs", 0) for k in byte)}-{max(ptx[k].get("regs", 0) for k in byte)}, '
             f'spills {sum(ptx[k].get("spst", 0) for k in byte)} B.')
open(out, 'w').write('\n'.join(L) + '\n')
print(f'gpu-coll-report: wrote {out} ({len(rows)} kernels x 2 targets; SASS for {sum(1 for k in rows if sass.get(k))}, '
      f'AMDGCN for {sum(1 for k in rows if gcn.get(k))})', file=sys.stderr)
PY
