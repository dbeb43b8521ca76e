#!/usr/bin/env bash
# Requalification, the same steps in CI and on your machine: the workflows
# examples/ci/github-actions.yml and examples/ci/azure-pipelines.yml call
# nothing else (README.md "Requalification", docs/EVIDENCE.md).
#
# usage: examples/ci/qualify.sh build        tools/deps.sh and make build
#        examples/ci/qualify.sh run NAME     the handoff on one account, once
#                                            per API version, into $OUT/NAME
#        examples/ci/qualify.sh gather       leaselua qualify over every
#                                            bundle under $OUT
#
# run reads (besides what leaselua itself reads: AZURE_STORAGE_CONTAINER,
# AZURE_STORAGE_BLOB, LEASELUA_CA_FILE):
#   AZURE_STORAGE_ACCOUNT_URL  the account, https://<account>.blob.core.windows.net
#   LEASELUA_API_VERSIONS      DATE or DATE,DATE,...: --api-version (one bundle
#                              each, under $OUT/NAME/<version>/ with index.json;
#                              one version: the bundle is $OUT/NAME itself)
#   LEASELUA_MANIFEST          the run manifest (docs/EVIDENCE.md)
#   LEASELUA_TOKEN_COMMAND     the command that prints a bearer token, run by
#                              leaselua without a shell (split on blanks); default
#                              az account get-access-token --resource
#                              https://storage.azure.com/ --query accessToken -o tsv
#   LEASELUA_TOKEN_COMMAND_A, _B, _OPERATOR, _OBSERVER
#                              one actor's own command (default the one above),
#                              each passed as --credential-<actor> token-command:CMD
#   LEASELUA_SIGN_KEY          optional: --sign-key FILE
#   LEASELUA_FLOW_ARGS         optional: more handoff options (--break-period 5)
# gather reads:
#   LEASELUA_ALLOWED_SIGNERS   optional: --require-signature --allowed-signers FILE
# and writes $OUT/qualification.md, .html, .json and $OUT/junit.xml.
# Both: LEASELUA (default: leaselua on PATH, else ./build/leaselua),
# LEASELUA_OUT (default ./qualification).
#
# Exit: build 0 or the failing step's; run: leaselua's, the worst of the
# versions (0 ACCEPT, 1 WAIT, 2 HOLD, 3 RECONCILE, 64 usage, 70 internal);
# gather: leaselua qualify's (0 every Azure row QUALIFIED, 1 no Azure
# evidence, 2 an Azure row NOT QUALIFIED or a bundle inconsistent, 64, 70).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${LEASELUA_OUT:-qualification}
default_cmd="az account get-access-token --resource https://storage.azure.com/ --query accessToken -o tsv"

die() {
  echo "qualify.sh: $*" >&2
  exit 64
}

leaselua_bin() {
  if [[ -n ${LEASELUA:-} ]]; then
    echo "$LEASELUA"
  elif command -v leaselua >/dev/null 2>&1; then
    command -v leaselua
  elif [[ -x $root/build/leaselua ]]; then
    echo "$root/build/leaselua"
  else
    die "leaselua not found: set LEASELUA, put it on PATH, or run '$0 build'"
  fi
}

cmd_build() {
  cd "$root"
  if ((EUID == 0)); then tools/deps.sh; else sudo tools/deps.sh; fi
  make build
}

cmd_run() {
  local name=${1:-}
  [[ $name =~ ^[A-Za-z0-9._-]+$ ]] ||
    die "run NAME: NAME (the bundle's folder under $out) is letters, digits, '.', '_' and '-'"
  [[ -n ${AZURE_STORAGE_ACCOUNT_URL:-} ]] || die "run: set AZURE_STORAGE_ACCOUNT_URL"
  [[ -n ${LEASELUA_API_VERSIONS:-} ]] || die "run: set LEASELUA_API_VERSIONS (DATE or DATE,DATE,...)"
  [[ -n ${LEASELUA_MANIFEST:-} ]] || die "run: set LEASELUA_MANIFEST (the run manifest)"
  local bin cmd args=()
  bin=$(leaselua_bin)
  mkdir -p "$out"
  local actor var
  for actor in a b operator observer; do
    var=LEASELUA_TOKEN_COMMAND_${actor^^}
    cmd=${!var:-${LEASELUA_TOKEN_COMMAND:-$default_cmd}}
    args+=("--credential-$actor" "token-command:$cmd")
  done
  if [[ -n ${LEASELUA_SIGN_KEY:-} ]]; then args+=(--sign-key "$LEASELUA_SIGN_KEY"); fi
  local flow_args=()
  if [[ -n ${LEASELUA_FLOW_ARGS:-} ]]; then read -r -a flow_args <<<"$LEASELUA_FLOW_ARGS"; fi
  echo "qualify.sh: $name: $AZURE_STORAGE_ACCOUNT_URL, API versions $LEASELUA_API_VERSIONS -> $out/$name" >&2
  local rc=0
  # One credential per actor and none by default: the ambient token, if
  # any, is not the one being qualified.
  env -u AZURE_STORAGE_TOKEN -u AZURE_STORAGE_SAS \
    "$bin" handoff --manifest "$LEASELUA_MANIFEST" --evidence "$out/$name" \
    --api-version "$LEASELUA_API_VERSIONS" "${args[@]}" "${flow_args[@]}" || rc=$?
  echo "qualify.sh: $name: exit $rc" >&2
  return "$rc"
}

# Every bundle under $out: a folder with export/ledger.jsonl, sorted.
bundles() {
  find "$out" -mindepth 3 -maxdepth 6 -type f -path '*/export/ledger.jsonl' -print |
    sed 's|/export/ledger\.jsonl$||' | LC_ALL=C sort
}

cmd_gather() {
  local bin
  bin=$(leaselua_bin)
  [[ -d $out ]] || die "gather: $out does not exist (no bundles were downloaded)"
  local dirs=()
  mapfile -t dirs < <(bundles)
  ((${#dirs[@]} > 0)) || die "gather: no bundle under $out"
  local sig=()
  if [[ -n ${LEASELUA_ALLOWED_SIGNERS:-} ]]; then
    sig=(--require-signature --allowed-signers "$LEASELUA_ALLOWED_SIGNERS")
  fi
  echo "qualify.sh: gather: ${#dirs[@]} bundles under $out" >&2
  local rc=0
  "$bin" qualify --md "${sig[@]}" --html "$out/qualification.html" \
    --junit "$out/junit.xml" "${dirs[@]}" >"$out/qualification.md" || rc=$?
  local jrc=0
  "$bin" qualify --json "${sig[@]}" "${dirs[@]}" >"$out/qualification.json" || jrc=$?
  ((jrc == rc)) || die "gather: qualify --json exited $jrc, --md $rc: the same bundles must give one answer"
  cat "$out/qualification.md"
  echo "qualify.sh: gather: exit $rc ($out/qualification.md, .html, .json, junit.xml)" >&2
  return "$rc"
}

case ${1:-} in
build) cmd_build ;;
run)
  shift
  cmd_run "$@"
  ;;
gather) cmd_gather ;;
*)
  sed -n '6,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 64
  ;;
esac
