#!/usr/bin/env python3
"""check_layers_selftest.py - check_layers.py can fail: it is run on two tiny trees made here.

  check_layers_selftest.py CHECK_LAYERS_PY [CC...]   (the C compiler's command; default cc)

The upward tree: runtime/ includes a header of collectives/ and calls a function that collectives/ defines (from a
plain object, and from a member named as meson names the objects of another folder, ".._runtime_lo.c.o", in an
archive and in a thin archive as meson's object library is); the check must fail and name each offence. The clean
tree: the same files with the call and the include going downward (collectives/ calls and includes runtime/); the
check must pass. api/ is absent in both (an empty layer).
"""
import os
import subprocess
import sys
import tempfile


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def make_tree(top, upward, cc):
    """Sources under top/src, objects under top/build (runtime/libx.a holds a meson-named member of collectives/)."""
    src, build = os.path.join(top, 'src'), os.path.join(top, 'build')
    lo, hi = ('runtime', 'collectives') if upward else ('collectives', 'runtime')
    write(os.path.join(src, hi, 'hi.h'), 'int shoal_hi(void);\n')
    write(os.path.join(src, hi, 'hi.c'), '#include "hi.h"\nint shoal_hi(void) { return 1; }\n')
    write(os.path.join(src, lo, 'lo.c'), '#include "hi.h"\nint shoal_lo(void) { return shoal_hi(); }\n')
    write(os.path.join(src, 'device', 'leaf.c'), 'int shoal_leaf(void) { return 0; }\n')
    objs = []
    for layer, name in [(hi, 'hi'), (lo, 'lo'), ('device', 'leaf')]:
        o = os.path.join(build, layer, name + '.o')
        os.makedirs(os.path.dirname(o), exist_ok=True)
        subprocess.run(cc + ['-c', '-I' + os.path.join(src, hi), os.path.join(src, layer, name + '.c'), '-o', o],
                       check=True)
        objs.append(o)
    # the same caller as a member of an archive of the other folder's target, named as meson names it
    member = os.path.join(build, hi, 'libx.a.p', '.._%s_lo.c.o' % lo)
    os.makedirs(os.path.dirname(member), exist_ok=True)
    subprocess.run(cc + ['-c', '-I' + os.path.join(src, hi), os.path.join(src, lo, 'lo.c'), '-o', member], check=True)
    archive = os.path.join(build, hi, 'libx.a')
    subprocess.run(['ar', 'rcs', archive, member], check=True)
    thin = os.path.join(build, hi, 'libthin.a')  # as meson's object libraries: members by path
    subprocess.run(['ar', 'rcsT', thin, member], check=True)
    return src, build, [os.path.relpath(o, build) for o in objs + [archive, thin]]


def run(check, src, build, objs):
    p = subprocess.run([sys.executable, check, '--root', src, '--objroot', build, '--objects'] + objs,
                       capture_output=True, text=True, cwd=build)  # objects named from the build folder, as meson does
    return p.returncode, p.stderr


def main():
    check = os.path.abspath(sys.argv[1])
    cc = sys.argv[2:] or ['cc']
    problems = []
    with tempfile.TemporaryDirectory() as top:
        src, build, objs = make_tree(os.path.join(top, 'up'), True, cc)
        rc, err = run(check, src, build, objs)
        sys.stdout.write('upward tree: exit %d\n%s' % (rc, err))
        want = ['runtime/lo.c:1: includes hi.h (collectives/hi.h, layer collectives above runtime)',
                'runtime/lo.o (runtime): undefined shoal_hi, defined above in collectives/hi.o (collectives)',
                '.._runtime_lo.c.o (runtime): undefined shoal_hi, defined above in collectives/hi.o (collectives)',
                'collectives/libx.a.p/.._runtime_lo.c.o (runtime): undefined shoal_hi, defined above in '
                'collectives/hi.o (collectives)']
        if rc != 1:
            problems.append('the upward tree did not fail (exit %d, not 1)' % rc)
        for w in want:
            if w not in err:
                problems.append('the upward tree\'s offences lack: ' + w)
        if len(err.strip().splitlines()) != len(want):
            problems.append('the upward tree has %d offence lines, not %d' % (len(err.strip().splitlines()), len(want)))
        src, build, objs = make_tree(os.path.join(top, 'down'), False, cc)
        rc, err = run(check, src, build, objs)
        sys.stdout.write('clean tree: exit %d\n%s' % (rc, err))
        if rc != 0:
            problems.append('the clean tree failed (exit %d): %s' % (rc, err.strip()))
    for p in problems:
        print('FAIL: ' + p)
    print('check_layers self-test: %s' % ('ok' if not problems else '%d problem(s)' % len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
