#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Boot one of Debian's kernel packages under QEMU and run sluice's checks in
# it, on this host's root filesystem: read-only over virtio-9p, a tmpfs
# overlay on top (nothing the guest does reaches the host), the package's own
# modules bound on /lib/modules, bpffs, cgroup2 and tracefs mounted.
#
#   tests/kernels/vm.sh KDIR OUT STEP...
#     KDIR  an extracted linux-image package (scripts/fetch-kernels.sh)
#     OUT   where the guest writes: summary.txt, a log per step, the
#           verifier logs of refused programs, dmesg
#     STEP  progs (bpf/sluice.bpf.o) | progs:OBJECT | check (sluiced --check) |
#           packet | e2e/test_NAME | kernels/test_NAME (a guest's own test,
#           tests/kernels/test_NAME.sh) | demo (make demo's run) |
#           shell:CMD (one word)
#
#   env: BUILD (build), VCPUS (2), MEM (4096 MiB), VM_TIMEOUT (1800 s),
#        GUEST_DIFF_TUPLES (4000: the packet suite's classifier differential),
#        ACCEL (tcg: software emulation, which boots anywhere; kvm where
#        /dev/kvm boots a stock kernel: this machine's PVM hypervisor does not),
#        NICS (0; 2: two virtio-net NICs on one QEMU hub, eth0 52:54:00:00:00:01
#        and eth1 52:54:00:00:00:02, virtio_net loaded: a real driver's XDP)
#
# The guest's summary.txt has one line per step, "step NAME rc=N S s", and
# the log of step S is S.log (a / in S becomes _; progs:X.bpf.o's is
# progs-X.log); tests/kernels/matrix.sh reads them.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KDIR=$(cd "$1" && pwd)
OUT=$2
shift 2
STEPS="$*"
BUILD=${BUILD:-build}
VCPUS=${VCPUS:-2}
MEM=${MEM:-4096}
VM_TIMEOUT=${VM_TIMEOUT:-1800}
ACCEL=${ACCEL:-tcg}
NICS=${NICS:-0}

die() { echo "kernels/vm: $*" >&2; exit 1; }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/install-deps.sh --kernels)"
[ -x /bin/busybox ] || die "/bin/busybox missing (busybox-static)"
KVER=$(ls "$KDIR/lib/modules" 2>/dev/null | head -n 1)
[ -n "$KVER" ] || die "$KDIR holds no lib/modules/<version>"
VMLINUZ=$KDIR/boot/vmlinuz-$KVER
[ -f "$VMLINUZ" ] || die "no $VMLINUZ"
[ -f "$KDIR/lib/modules/$KVER/modules.dep" ] || depmod -b "$KDIR" "$KVER"

case $ACCEL in
kvm) accel=(-enable-kvm -cpu host) ;;
tcg) accel=(-accel 'tcg,thread=multi' -cpu max) ;;
*) die "ACCEL=$ACCEL: tcg or kvm" ;;
esac

# A hub joins the two NICs like a cable.  Its ports have no queues= (only
# tap and vhost-user do): one queue pair each, so virtio_net's XDP_TX runs
# on its shared, locked transmit queue, as on a small cloud VM.
case $NICS in
0) nics=(-nic none) ;;
2) nics=(-netdev hubport,id=p0,hubid=0 -device virtio-net-pci,netdev=p0,mq=on,vectors=10,mac=52:54:00:00:00:01
	 -netdev hubport,id=p1,hubid=0 -device virtio-net-pci,netdev=p1,mac=52:54:00:00:00:02) ;;
*) die "NICS=$NICS: 0 or 2" ;;
esac

# The initramfs: a static busybox and the modules it needs to mount the
# host's root (virtio PCI, 9p, overlay), in load order.  One per kernel,
# kept beside it.
INITRD=$KDIR/sluice-initrd.cpio.gz
if [ ! -s "$INITRD" ]; then
	tree=$(mktemp -d)
	trap 'rm -rf "$tree"' EXIT
	mkdir -p "$tree"/{bin,mods,proc,sys,dev,lower,rw,newroot}
	cp /bin/busybox "$tree/bin/busybox"
	: >"$tree/mods/order"
	for m in $(for x in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -d "$KDIR" -S "$KVER" --show-depends "$x" 2>/dev/null; done | awk '$1 == "insmod" { print $2 }'); do
		b=$(basename "$m"); b=${b%.xz}; b=${b%.zst}
		grep -qx "$b" "$tree/mods/order" && continue
		case $m in
		*.xz) xz -dc "$m" >"$tree/mods/$b" ;;
		*.zst) zstd -dcq "$m" >"$tree/mods/$b" ;;
		*) cp "$m" "$tree/mods/$b" ;;
		esac
		echo "$b" >>"$tree/mods/order"
	done
	cat >"$tree/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do insmod /mods/$m || echo "init: insmod $m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /lower
mount -t tmpfs -o size=8g,mode=755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot
mkdir -p /newroot/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /newroot/out
mount --move /dev /newroot/dev; mount --move /proc /newroot/proc; mount --move /sys /newroot/sys
exec switch_root /newroot /bin/bash /out/guest.sh
echo "init: switch_root failed"; echo o >/proc/sysrq-trigger
EOF
	chmod +x "$tree/init"
	(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) >"$INITRD.tmp"
	mv "$INITRD.tmp" "$INITRD"
fi

rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# The guest's PID 1 after switch_root: mounts, then each step under a
# bound, then power off (also when a step hangs: timeout kills it).
{
	printf '#!/bin/bash\nKVER=%q KDIR=%q ROOT=%q BUILD=%q STEPS=%q NICS=%q\n' "$KVER" "$KDIR" "$ROOT" "$BUILD" "$STEPS" "$NICS"
	cat <<'EOF'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /run; mkdir -p /run/netns /run/lock
mount -t tmpfs tmpfs /tmp; mount -t tmpfs tmpfs /var/tmp
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /lib/modules/$KVER && mount --bind $KDIR/lib/modules/$KVER /lib/modules/$KVER
hostname "k$KVER"; ip link set lo up
if [ "$NICS" != 0 ]; then
	modprobe virtio_net
	for _ in $(seq 50); do ip link show eth1 >/dev/null 2>&1 && break; sleep 0.1; done
fi
echo 1 >/proc/sys/kernel/sysrq
echo "kernel $(uname -r), $(nproc) CPUs, $(free -m | awk '/Mem:/ { print $2 }') MiB" >/out/summary.txt
step() { # NAME BOUND CMD...
	local name=$1 bound=$2 t0=$SECONDS rc; shift 2
	(cd "$ROOT" && timeout --kill-after=15 "$bound" "$@") >"/out/${name//\//_}.log" 2>&1
	rc=$?
	echo "step $name rc=$rc $((SECONDS - t0)) s" >>/out/summary.txt
}
for s in $STEPS; do
	case $s in
	progs) step progs 600 "$BUILD/tests/kernels/progs_load" bpf/sluice.bpf.o /out ;;
	progs:*)
		obj=${s#progs:}; name=$(basename "$obj" .bpf.o)
		mkdir -p "/out/$name"
		step "progs-$name" 600 "$BUILD/tests/kernels/progs_load" "$obj" "/out/$name" ;;
	# The classifier's differential test with fewer random tuples than on
	# the host (50,000 a configuration there): the kernel's part is the
	# same program; the emulated CPU is some ten times slower.
	packet) step packet 1200 env BUILD="$BUILD" LOG_DIR=/tmp/test-logs SLUICE_DIFF_TUPLES="${GUEST_DIFF_TUPLES:-4000}" \
			tests/run-all.sh packet ;;
	check) step check 300 "$BUILD/sluiced" --check ;;
	demo) step demo 900 scripts/demo.sh ;;
	e2e/test_* | kernels/test_*) step "$s" 900 env BUILD="$BUILD" LOG_DIR=/tmp/test-logs tests/run-all.sh "$s" ;;
	shell:*) step shell 900 bash -c "${s#shell:}" ;;
	*) echo "step $s rc=127 0 s (unknown step)" >>/out/summary.txt ;;
	esac
done
mkdir -p /out/test-logs && cp -r /tmp/test-logs/. /out/test-logs/ 2>/dev/null
dmesg >/out/dmesg.txt
echo "done" >>/out/summary.txt
sync
echo o >/proc/sysrq-trigger
sleep 30
EOF
} >"$OUT/guest.sh"
chmod +x "$OUT/guest.sh"

set +e
timeout --kill-after=10 "$VM_TIMEOUT" qemu-system-x86_64 "${accel[@]}" -smp "$VCPUS" -m "$MEM" \
	-no-reboot -display none -monitor none -serial file:"$OUT/console.log" \
	-kernel "$VMLINUZ" -initrd "$INITRD" \
	-append "console=ttyS0 rdinit=/init panic=-1 loglevel=4 net.ifnames=0 mitigations=off" \
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=out,path="$OUT",security_model=none \
	-device virtio-9p-pci,fsdev=out,mount_tag=out \
	"${nics[@]}" </dev/null
rc=$?
set -e
grep -qx 'done' "$OUT/summary.txt" 2>/dev/null || die "the $KVER guest did not finish (qemu rc=$rc; $OUT/console.log)"
