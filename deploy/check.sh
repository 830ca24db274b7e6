#!/usr/bin/env bash
# Offline checks of deploy/ (no Docker engine, no cluster, no schema downloads):
#   hadolint          deploy/Dockerfile
#   check-jsonschema  deploy/compose.yaml against the compose spec bundled with check-jsonschema
#   render_k8s.py     deploy/k8s rendered as `kustomize build` would, plus cross-references
#   kubernetes-validate --strict   the rendered manifests, with its bundled schemas
#   yamllint          every YAML file in deploy/ (config deploy/.yamllint)
#   gunicorn config   deploy/gunicorn.conf.py loads and every value passes gunicorn's validation
#   ShellCheck        every shell script in the repository: *.sh, and extensionless files
#                     that start with a sh or bash #! line, such as .ci/run
# Tools come from the project venv (pip install -e '.[test]'; VENV=... to use another) or PATH;
# ShellCheck is installed from Debian's packages if missing.
# Usage: deploy/check.sh          exits non-zero if any check fails; runs them all regardless.
# K8S_VERSIONS="1.29.0 1.37.0" deploy/check.sh   validates against those Kubernetes versions
# (default: kubernetes-validate's newest bundled version).
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo" || exit 2
venv="${VENV:-$repo/.venv}"
failed=()
passed=0

# Path of a tool: the venv's, else PATH's; empty if neither has it.
find_tool() {
  if [ -x "$venv/bin/$1" ]; then
    echo "$venv/bin/$1"
  else
    command -v "$1" || true
  fi
}

# check NAME COMMAND...: prints what it runs, its output indented, and the verdict.
check() {
  local name="$1"
  shift
  echo "== $name"
  echo "   \$ ${*/#$repo\//}"
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  [ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/   | /'
  if [ "$rc" -eq 0 ]; then
    echo "   ok: $name"
    passed=$((passed + 1))
  else
    echo "   FAILED: $name (exit $rc)"
    failed+=("$name")
  fi
}

missing() {
  echo "== $1"
  echo "   FAILED: $2 not found (install the test extra: pip install -e '.[test]')"
  failed+=("$1")
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

python="$(find_tool python)"
[ -z "$python" ] && python="$(command -v python3 || true)"
if [ -z "$python" ]; then
  echo "check.sh: no python found" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# 1. Dockerfile
hadolint="$(find_tool hadolint)"
if [ -n "$hadolint" ]; then
  check "hadolint deploy/Dockerfile" "$hadolint" --failure-threshold style deploy/Dockerfile
else
  missing "hadolint deploy/Dockerfile" hadolint
fi

# 2. Compose file, against the schema vendored inside check-jsonschema (no download).
cjs="$(find_tool check-jsonschema)"
if [ -n "$cjs" ]; then
  check "compose spec: deploy/compose.yaml" \
    "$cjs" --builtin-schema vendor.compose-spec deploy/compose.yaml
else
  missing "compose spec: deploy/compose.yaml" check-jsonschema
fi

# 3. Kubernetes: render the kustomization, then validate strictly (unknown fields are errors).
rendered="$tmp/k8s-rendered.yaml"
check "render deploy/k8s (kustomize resources + cross-references)" \
  "$python" deploy/render_k8s.py deploy/k8s -o "$rendered"
kv="$(find_tool kubernetes-validate)"
if [ -z "$kv" ]; then
  missing "kubernetes-validate --strict" kubernetes-validate
elif [ ! -s "$rendered" ]; then
  echo "== kubernetes-validate --strict"
  echo "   FAILED: nothing rendered to validate"
  failed+=("kubernetes-validate --strict")
elif [ -n "${K8S_VERSIONS:-}" ]; then
  for version in $K8S_VERSIONS; do
    check "kubernetes-validate --strict (Kubernetes $version)" \
      "$kv" --strict --quiet -k "$version" "$rendered"
  done
else
  check "kubernetes-validate --strict (bundled default version)" \
    "$kv" --strict --quiet "$rendered"
fi

# 4. YAML style.
yamllint="$(find_tool yamllint)"
if [ -n "$yamllint" ]; then
  check "yamllint deploy/" "$yamllint" --strict -c deploy/.yamllint deploy/
else
  missing "yamllint deploy/" yamllint
fi

# 5. Gunicorn config, loaded the way gunicorn loads it (each setting through its validator).
check "gunicorn config deploy/gunicorn.conf.py" "$python" deploy/gunicorn.conf.py

# 6. Shell scripts.
shellcheck="$(find_tool shellcheck)"
if [ -z "$shellcheck" ]; then
  echo "check.sh: installing shellcheck from Debian's packages" >&2
  { as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq shellcheck; } \
    >/dev/null 2>&1
  shellcheck="$(find_tool shellcheck)"
fi
scripts=()
while IFS= read -r -d '' f; do
  case "$f" in
    *.sh) scripts+=("$f") ;;
    *) head -n1 "$f" 2>/dev/null | grep -Eq '^#!.*([/ ]|^#!)(ba|da)?sh( |$)' && scripts+=("$f") ;;
  esac
done < <(find . \( -name .git -o -name .venv -o -name node_modules -o -name __pycache__ \
  -o -name '*.egg-info' -o -name .pytest_cache -o -name .ruff_cache \) -prune \
  -o -type f \( -name '*.sh' -o ! -name '*.*' \) -print0 | sort -z)
if [ -z "$shellcheck" ]; then
  missing "shellcheck" "shellcheck (apt-get install shellcheck)"
elif [ "${#scripts[@]}" -eq 0 ]; then
  echo "== shellcheck: no shell scripts found"
else
  check "shellcheck (${#scripts[@]} scripts)" "$shellcheck" --external-sources "${scripts[@]}"
fi

echo
if [ "${#failed[@]}" -gt 0 ]; then
  echo "deploy/check.sh: ${#failed[@]} failed, $passed passed:"
  printf '  - %s\n' "${failed[@]}"
  exit 1
fi
echo "deploy/check.sh: all $passed checks passed"
