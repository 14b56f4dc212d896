#!/usr/bin/env bash
# mp's release binaries: what the release workflow (.github/workflows/release.yml) packs
# and the Action (action.yml) unpacks. Bash 3 and the tools of a stock Linux or macOS
# runner only (curl, tar, sha256sum or shasum).
#
#   mp-release.sh digest ROOT
#       The digest of the sources mp is built from under ROOT (one line, 64 hex digits):
#       the Action's cache key, and what ties a release to the sources it was built from.
#   mp-release.sh target
#       The release target of this machine: x86_64-unknown-linux-gnu,
#       aarch64-unknown-linux-gnu or aarch64-apple-darwin (exit 1 for any other).
#   mp-release.sh pack VERSION TARGET BINARY OUT
#       Writes OUT/mp-VERSION-TARGET.tar.gz holding BINARY as `mp`.
#   mp-release.sh seal VERSION DIGEST OUT
#       Writes OUT/mp-VERSION.source-digest (DIGEST) and OUT/SHA256SUMS over every file of
#       OUT: the release's assets.
#   mp-release.sh install BASE_URL VERSION TARGET DIGEST DEST
#       Downloads SHA256SUMS, the source digest and the archive from BASE_URL, checks the
#       archive and the digest file against SHA256SUMS and the digest against DIGEST, and
#       only then puts the binary at DEST/bin/mp. Exit 0: installed; exit 1: nothing
#       installed (no such release, an asset missing, a checksum or the digest wrong),
#       and the reason on stderr. Never leaves an unverified binary in DEST.
set -euo pipefail

say() { printf 'mp-release: %s\n' "$*" >&2; }

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

digest() (
  cd "$1"
  find Cargo.toml Cargo.lock crates schemas fixtures examples -type f -not -path '*/target/*' -print0 \
    | LC_ALL=C sort -z | xargs -0 $SHA256 | $SHA256 | cut -c1-64
)

target() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-gnu ;;
    Darwin-arm64) echo aarch64-apple-darwin ;;
    *) say "no release binary for $(uname -s) $(uname -m)"; return 1 ;;
  esac
}

pack() (
  local version=$1 target=$2 binary=$3 out=$4 stage
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  cp "$binary" "$stage/mp"
  chmod 755 "$stage/mp"
  mkdir -p "$out"
  tar -C "$stage" -czf "$out/mp-$version-$target.tar.gz" mp
)

seal() {
  local version=$1 digest=$2 out=$3
  printf '%s\n' "$digest" > "$out/mp-$version.source-digest"
  (cd "$out" && rm -f SHA256SUMS && sha256 * > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
}

# The checksum SHA256SUMS lists for NAME, or nothing.
listed() {
  awk -v name="$2" '($2 == name || $2 == "*" name) && $1 ~ /^[0-9a-f]+$/ && length($1) == 64 { print $1 }' "$1/SHA256SUMS"
}

# Whether the file DIR/NAME has the checksum SHA256SUMS lists for it (exactly one line).
verified() {
  local dir=$1 name=$2 want got
  want=$(listed "$dir" "$name")
  if [ -z "$want" ] || [ "$(printf '%s\n' "$want" | wc -l)" -ne 1 ]; then
    say "SHA256SUMS lists no single checksum for $name"
    return 1
  fi
  got=$(sha256 "$dir/$name" | cut -c1-64)
  if [ "$got" != "$want" ]; then
    say "$name does not match its checksum (listed $want, got $got): refused"
    return 1
  fi
}

# In a subshell, so that its temporary directory goes with it whatever happens.
install() (
  local base=$1 version=$2 target=$3 digest=$4 dest=$5 work name
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  name="mp-$version-$target.tar.gz"
  fetch() {
    curl --fail --silent --show-error --location --retry 2 --max-time 120 \
      --output "$work/$1" "$base/$1" 2>"$work/curl.err" \
      || { say "cannot download $base/$1: $(tr '\n' ' ' < "$work/curl.err")"; return 1; }
  }
  fetch SHA256SUMS || return 1
  fetch "mp-$version.source-digest" || return 1
  fetch "$name" || return 1
  verified "$work" "mp-$version.source-digest" || return 1
  verified "$work" "$name" || return 1
  if [ "$(head -n 1 "$work/mp-$version.source-digest")" != "$digest" ]; then
    say "the release v$version was built from other sources than this action's: refused"
    return 1
  fi
  mkdir -p "$work/unpacked"
  tar -xzf "$work/$name" -C "$work/unpacked" mp || { say "$name holds no mp"; return 1; }
  mkdir -p "$dest/bin"
  mv "$work/unpacked/mp" "$dest/bin/mp.verified"
  chmod 755 "$dest/bin/mp.verified"
  mv "$dest/bin/mp.verified" "$dest/bin/mp"
  say "installed mp $version ($target) from $base, checksum and sources verified"
)

if command -v sha256sum >/dev/null 2>&1; then SHA256=sha256sum; else SHA256="shasum -a 256"; fi

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  digest) [ $# -eq 1 ] || { say "usage: $0 digest ROOT"; exit 2; }; digest "$@" ;;
  target) target ;;
  pack) [ $# -eq 4 ] || { say "usage: $0 pack VERSION TARGET BINARY OUT"; exit 2; }; pack "$@" ;;
  seal) [ $# -eq 3 ] || { say "usage: $0 seal VERSION DIGEST OUT"; exit 2; }; seal "$@" ;;
  install) [ $# -eq 5 ] || { say "usage: $0 install BASE_URL VERSION TARGET DIGEST DEST"; exit 2; }; install "$@" ;;
  *) say "usage: $0 digest|target|pack|seal|install ..."; exit 2 ;;
esac
