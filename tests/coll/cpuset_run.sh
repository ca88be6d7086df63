#!/bin/sh
# cpuset_run.sh CMD... - run CMD inside a new cgroup cpuset holding only the first CPU this shell may use (cgroup v2
# where its cpuset controller is on, else v1's cpuset hierarchy), then remove the cgroup. Exits 77 (skip) where no
# cpuset cgroup can be made (not root, no cpuset controller, a read-only /sys/fs/cgroup). A container or a batch
# job's allocation limits a node's CPUs this way, which the runtime must count (test_crowd --expect-crowded).
cpu=$(taskset -cp $$ 2>/dev/null | sed 's/.*: *//; s/[-,].*//')
[ -n "$cpu" ] || { echo "cpuset_run: cannot read this shell's CPUs: skipped"; exit 77; }
name=shoal-cpuset-$$
if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  dir=/sys/fs/cgroup/$name cpus=cpuset.cpus mems=cpuset.mems procs=cgroup.procs back=/sys/fs/cgroup/cgroup.procs
elif [ -d /sys/fs/cgroup/cpuset ] && [ -w /sys/fs/cgroup/cpuset ]; then
  dir=/sys/fs/cgroup/cpuset/$name cpus=cpuset.cpus mems=cpuset.mems procs=tasks back=/sys/fs/cgroup/cpuset/tasks
else
  echo "cpuset_run: no writable cpuset cgroup: skipped"; exit 77
fi
mkdir "$dir" 2>/dev/null || { echo "cpuset_run: cannot create $dir: skipped"; exit 77; }
cleanup() { echo $$ > "$back" 2>/dev/null; rmdir "$dir" 2>/dev/null; }
trap cleanup EXIT
mem=$(cat "$(dirname "$dir")/cpuset.mems.effective" 2>/dev/null || cat "$(dirname "$dir")/$mems" 2>/dev/null)
if ! { echo "$cpu" > "$dir/$cpus" && echo "${mem:-0}" > "$dir/$mems" && echo $$ > "$dir/$procs"; } 2>/dev/null; then
  echo "cpuset_run: cannot set up $dir: skipped"; exit 77
fi
echo "cpuset_run: CPU $cpu only ($dir)"
"$@"
