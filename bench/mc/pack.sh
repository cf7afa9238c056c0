#!/usr/bin/env bash
# pack.sh: build a self-contained multi-core benchmark kit for a Linux
# x86-64 machine that has no package registry and no Go toolchain.
#
#   bench/mc/pack.sh -o /tmp/riptide-mc.tar.xz
#   bench/mc/pack.sh -ws -o /tmp/riptide-mc-ws.tar.xz   # the WebSocket servers instead
#
# The kit (one folder, riptide-mc/, packed with tar cJf) holds:
#   bin/       every Go server and the harness (riptide-bench), built with
#              (the HTTP servers; with -ws the WebSocket servers, *-ws*,
#              instead: both sets do not fit in 64 MiB together)
#              CGO_ENABLED=0 (static), the C ceiling built with cc -static
#              (dynamic with its libraries when static linking fails), and
#              buildinfo.json (commit, Go, cc, time);
#   libexec/   wrk, h2load, nginx, h2o, nghttpd, taskset, lscpu as installed
#              here, and lib/ with every shared library ldd lists for them
#              plus the dynamic loader;
#   tools/     one wrapper per tool that runs it through the packed loader
#              with --library-path lib/, so nothing of the target's /usr is
#              used (the wrappers need only /bin/sh);
#   go.mod     the bench module's (the harness records the peers' versions);
#   run.sh     the command that runs it there (bench/mc/run.sh).
# Missing tools are installed first when running as root with apt-get
# (wrk nghttp2-client nghttp2-server nginx-light h2o); the archive must stay
# under 64 MiB (checked).
set -euo pipefail

out=""
ws=no
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out="$2"; shift 2 ;;
	-ws) ws=yes; shift ;;
	-h|--help) sed -n '2,25p' "$0"; exit 0 ;;
	*) echo "pack.sh: unknown argument $1 (usage: pack.sh [-ws] -o KIT.tar.xz)" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { echo "usage: pack.sh -o KIT.tar.xz" >&2; exit 2; }
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

here=$(cd "$(dirname "$0")" && pwd)
bench=$(dirname "$here")
limit=$((64 << 20))

# The tools, as the harness looks them up (PATH, then /usr/sbin).
tools=(wrk h2load nginx h2o nghttpd taskset lscpu)
pkgs=(wrk nghttp2-client nginx-light h2o nghttp2-server util-linux util-linux)
find_tool() { command -v "$1" 2>/dev/null || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } || true; }
missing=()
for i in "${!tools[@]}"; do
	[ -n "$(find_tool "${tools[$i]}")" ] || missing+=("${pkgs[$i]}")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "pack: installing ${missing[*]}" >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
	else
		echo "pack: missing tools (packages ${missing[*]}): install them, or run as root with apt-get" >&2
		exit 1
	fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kit="$work/riptide-mc"
mkdir -p "$kit/bin" "$kit/libexec" "$kit/lib" "$kit/tools"

echo "pack: building the Go servers and the harness (CGO_ENABLED=0)" >&2
# The WebSocket servers (servers/*-ws*) with -ws, the others without.
servers=()
for d in "$bench"/servers/*/; do
	case "$(basename "$d")" in
	*-ws|*-ws-*) [ "$ws" = yes ] && servers+=("./servers/$(basename "$d")") ;;
	*) [ "$ws" = no ] && servers+=("./servers/$(basename "$d")") ;;
	esac
done
(cd "$bench" && CGO_ENABLED=0 go build -trimpath -o "$kit/bin/" "${servers[@]}" ./cmd/riptide-bench)
for f in "$kit"/bin/*; do
	if command -v file >/dev/null && file "$f" | grep -q 'dynamically linked'; then
		echo "pack: $f is not static" >&2
		exit 1
	fi
done

echo "pack: building the ceiling (cc -static)" >&2
ceiling_static=yes
if ! cc -O2 -Wall -static -o "$kit/bin/ceiling" "$bench/ceiling/ceiling.c" -lpthread 2>"$work/cc.log"; then
	cat "$work/cc.log" >&2
	echo "pack: static link failed; packing a dynamic ceiling with its libraries" >&2
	cc -O2 -Wall -o "$kit/libexec/ceiling" "$bench/ceiling/ceiling.c" -lpthread
	ceiling_static=no
fi

# copy_libs BIN: every library ldd resolves for BIN, and the loader, into lib/.
copy_libs() {
	ldd "$1" | while read -r a b c _; do
		local p=""
		if [ "$b" = "=>" ] && [ "${c:0:1}" = / ]; then p="$c"; elif [ "${a:0:1}" = / ]; then p="$a"; fi
		[ -n "$p" ] || continue
		case "$(basename "$p")" in
		ld-linux*) [ -e "$kit/lib/ld.so" ] || cp -L "$p" "$kit/lib/ld.so" ;; # the loader the wrappers run
		*) [ -e "$kit/lib/$(basename "$p")" ] || cp -L "$p" "$kit/lib/" ;;
		esac
	done
}

wrap() { # wrap NAME: tools/NAME runs libexec/NAME through the packed loader
	cat >"$kit/tools/$1" <<WRAP
#!/bin/sh
# Runs the packed $1 with the packed loader and libraries (no system /usr).
k=\${0%/*}/..
exec "\$k/lib/ld.so" --library-path "\$k/lib" "\$k/libexec/$1" "\$@"
WRAP
	chmod +x "$kit/tools/$1"
}

for t in "${tools[@]}"; do
	p=$(find_tool "$t")
	cp -L "$p" "$kit/libexec/$t"
	copy_libs "$p"
	wrap "$t"
done
if [ "$ceiling_static" = no ]; then
	copy_libs "$kit/libexec/ceiling"
	wrap ceiling
	ln -s ../tools/ceiling "$kit/bin/ceiling"
fi
[ -e "$kit/lib/ld.so" ] || { echo "pack: no dynamic loader found by ldd" >&2; exit 1; }

cp "$bench/go.mod" "$kit/go.mod"
cp "$here/run.sh" "$kit/run.sh"
chmod +x "$kit/run.sh"
commit=$(git -C "$bench" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && [ -n "$(git -C "$bench/.." status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	commit="$commit-dirty"
fi
json() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
printf '{"commit":"%s","go":"%s","cc":"%s","packed":"%s"}\n' \
	"$(json "$commit")" "$(json "$(go version)")" "$(json "$(cc --version | head -1) (ceiling static: $ceiling_static)")" \
	"$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$kit/bin/buildinfo.json"
{
	echo "riptide multi-core kit, commit $commit, packed $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
	for t in "${tools[@]}"; do echo "$t: $(find_tool "$t") ($(dpkg -S "$(find_tool "$t")" 2>/dev/null | cut -d: -f1 | head -1))"; done
} >"$kit/MANIFEST"
(cd "$kit" && find . -type f ! -name MANIFEST | sort | xargs sha256sum) >>"$kit/MANIFEST"

mkdir -p "$(dirname "$out")"
tar -C "$work" -cJf "$out" riptide-mc
size=$(stat -c %s "$out")
echo "pack: $out: $((size >> 20)) MiB ($size bytes), $(du -sh "$kit" | cut -f1) unpacked" >&2
if [ "$size" -gt "$limit" ]; then
	echo "pack: the archive is over 64 MiB" >&2
	exit 1
fi
