# Shared by scripts/compose-secrets.sh and scripts/k8s-secrets.sh (sourced, not run): they
# make credential files in the bootstrap's format, keeping every value a file already holds.

# secrets_dir DIR makes DIR (0700; it must be named secrets, as the bootstrap writes
# DATA_DIR/secrets) and prints its absolute path.
secrets_dir() {
  if [ "$(basename "$1")" != secrets ]; then
    echo "the secret folder must be named secrets, not $1" >&2
    return 1
  fi
  mkdir -p "$1"
  chmod 700 "$1"
  (cd "$1" && pwd)
}

random() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# kept NAME FILE prints NAME's value in FILE (quoted or not), or a fresh random one.
kept() {
  local v=""
  if [ -f "$2" ]; then v=$(sed -n "s/^$1='\{0,1\}\([^']*\)'\{0,1\}\$/\1/p" "$2"); fi
  printf '%s' "${v:-$(random)}"
}

# put FILE KEY=value... writes FILE (0600, through a temporary file) as KEY='value' lines,
# which a shell, compose's env_file and kustomize's secretGenerator envs all read.
put() {
  local f=$1 kv
  shift
  {
    echo "# Written by $(basename "$0"). Keep it private."
    for kv in "$@"; do printf "%s='%s'\n" "${kv%%=*}" "${kv#*=}"; done
  } >"$f.tmp"
  chmod 600 "$f.tmp"
  mv "$f.tmp" "$f"
}

# offline_bootstrap DIR VAR=value... runs `bootstrap -offline` (built from tools/bootstrap)
# with only the given settings: it writes each workload's own <name>.env and the broker's
# rabbitmq-definitions.json into DIR, reaching nothing.
offline_bootstrap() {
  local dir=$1 tmp
  shift
  tmp=$(mktemp -d)
  (cd tools/bootstrap && go build -o "$tmp/bootstrap" .) || { rm -rf "$tmp"; return 1; }
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" DATA_DIR="$(dirname "$dir")" BOOTSTRAP_BROKER=definitions "$@" \
    "$tmp/bootstrap" -offline || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
}

# unquote DIR rewrites every DIR/*.env as KEY=value: kustomize's secretGenerator keeps quotes
# as part of a value. The bootstrap reads either form, so a later run keeps every password.
unquote() {
  local f
  for f in "$1"/*.env; do
    sed -i "s/^\([A-Za-z_][A-Za-z0-9_]*\)='\(.*\)'\$/\1=\2/" "$f"
  done
}
