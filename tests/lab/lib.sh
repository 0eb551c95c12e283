# shellcheck shell=bash
# Shared helpers of the RDMA lab scripts (lab-check, build-guest, can-run).
# Sourced, not run.

LAB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_REPO=$(cd "$LAB_SRC/../.." && pwd)

# Guest userland suite and kernel.  The kernel comes through the host's own apt
# configuration, so its exact version is known before building and can key the cache.
LAB_SUITE=${LAB_SUITE:-bookworm}
LAB_KPKG=${LAB_KPKG:-linux-image-amd64}

# Built guests live outside the source tree, one directory per set of inputs.
LAB_CACHE=${LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/librpcrdma-lab}

# Free space the lab needs: a build takes about 0.5 GiB while it runs (userland
# tree, kernel package, packed initramfs), a run a few hundred MiB of captures.
LAB_MIN_FREE_MB=${LAB_MIN_FREE_MB:-2048}
# The guest gets 2 GiB of memory; the host needs that much free plus qemu itself.
LAB_GUEST_MB=${LAB_GUEST_MB:-2048}

log() { printf 'lab: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# read_list FILE: the entries of a package/module list, comments and blanks dropped.
read_list() {
	sed -e 's/#.*//' -e 's/[[:space:]]\+$//' -e '/^[[:space:]]*$/d' "$1"
}

# host_missing: host packages from packages.txt that are not installed.
host_missing() {
	local p status
	for p in $(read_list "$LAB_SRC/packages.txt"); do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[[ $status == *"install ok installed"* ]] || printf '%s\n' "$p"
	done
}

# host_apt_mirror: the Debian mirror the host's apt uses, so that the guest is
# built from the same place (deb822 sources first, then the one-line format).
host_apt_mirror() {
	local f u=""
	if [ -n "${LAB_MIRROR:-}" ]; then echo "$LAB_MIRROR"; return; fi
	for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
		[ -f "$f" ] || continue
		u=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }
		         $1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }' "$f")
		[ -n "$u" ] && break
	done
	echo "${u:-http://deb.debian.org/debian}"
}

# kernel_resolve: prints "PACKAGE VERSION" of the kernel image the guest gets,
# following the meta package (linux-image-amd64) to the versioned one.  Empty
# when the host's apt lists do not know it (no apt-get update yet).
kernel_resolve() {
	local pkg ver
	pkg=$(apt-cache depends "$LAB_KPKG" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	pkg=${pkg:-$LAB_KPKG}
	ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
	if [ -n "$ver" ] && [ "$ver" != "(none)" ]; then echo "$pkg $ver"; fi
}

# guest_inputs KERNEL: everything that decides the guest image's content, one
# item a line; its hash names the cache directory.
guest_inputs() {
	echo "suite $LAB_SUITE"
	echo "mirror $(host_apt_mirror)"
	echo "kernel $1"
	echo "extra-packages ${LAB_EXTRA_PKGS:-}"
	local f
	for f in build-guest guest-init guest-packages.txt guest-modules.txt; do
		echo "$f $(sha256sum < "$LAB_SRC/$f" | cut -d' ' -f1)"
	done
}

guest_key() { guest_inputs "$1" | sha256sum | cut -c1-16; }

# free_mb DIR: free MiB on the file system that holds DIR (or its nearest
# existing parent, since the cache directory may not exist yet).
free_mb() {
	local d=$1
	while [ ! -d "$d" ]; do d=$(dirname "$d"); done
	df -Pm "$d" | awk 'NR == 2 { print $4 }'
}

# qemu_accel: KVM only with hardware virtualization.  A /dev/kvm backed by a
# software hypervisor (PVM: /sys/module/kvm_pvm, no vmx/svm flag) never finishes
# booting a stock kernel, so TCG is the default everywhere else.
qemu_accel() {
	local a=${LAB_ACCEL:-auto}
	if [ "$a" = auto ]; then
		a=tcg
		if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && [ ! -d /sys/module/kvm_pvm ]; then
			a=kvm
		fi
	fi
	case $a in
	kvm) echo "-accel kvm -cpu host" ;;
	tcg) echo "-accel tcg,thread=multi,tb-size=256 -cpu max" ;;
	*) die "LAB_ACCEL must be auto, kvm or tcg (not '$a')" ;;
	esac
}
