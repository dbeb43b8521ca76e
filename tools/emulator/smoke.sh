#!/usr/bin/env bash
# Live smoke check of Azurite with bearer tokens over https, using curl only
# (no leaselua code). A diagnostic for humans: it prints what the emulator
# answered for each lease step, next to what the Azure REST docs say.
#
# usage: tools/emulator/smoke.sh [RUNDIR]
#   Uses AZURE_STORAGE_ACCOUNT_URL, AZURE_STORAGE_TOKEN and LEASELUA_CA_FILE
#   from the environment; when they are unset it sources RUNDIR/env
#   (default tools/emulator/run/env), as written by tools/emulator/start.
#
# Exit status: 0 when the basic path works (bearer auth over https, container,
# put, acquire, lease enforcement, break to broken); 1 otherwise. Answers that
# differ from the Azure docs in the other steps are shown as DIFF and counted,
# but do not fail the run: they are facts about the emulator.
# The token is never printed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ -z ${AZURE_STORAGE_ACCOUNT_URL:-} || -z ${AZURE_STORAGE_TOKEN:-} ]]; then
  envfile=${1:-$here/run}/env
  [[ -r $envfile ]] || {
    echo "smoke: no AZURE_STORAGE_ACCOUNT_URL/AZURE_STORAGE_TOKEN and no $envfile (run tools/emulator/start first)" >&2
    exit 1
  }
  # shellcheck disable=SC1090
  . "$envfile"
fi
: "${LEASELUA_CA_FILE:?LEASELUA_CA_FILE is not set}"
command -v curl >/dev/null || {
  echo "smoke: curl not found" >&2
  exit 1
}

API_VERSION=2023-11-03
CONTAINER=lease-handoff-lab
base=${AZURE_STORAGE_ACCOUNT_URL%/}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 0700 "$work"
# The Authorization header goes to curl through a 0600 file, not argv.
(
  umask 077
  printf 'Authorization: Bearer %s\n' "$AZURE_STORAGE_TOKEN" >"$work/auth"
)

new_uuid() {
  if [[ -r /proc/sys/kernel/random/uuid ]]; then
    cat /proc/sys/kernel/random/uuid
  else
    openssl rand -hex 16 | sed -E 's/(.{8})(.{4})(.{4})(.{4})(.{12})/\1-\2-\3-\4-\5/'
  fi
}

hdr() { # hdr NAME: value of a response header of the last request
  awk -v n="$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')" -F': ' '
    { sub(/\r$/, "") }
    tolower($1) == n { sub(/^[^:]*: /, ""); v = $0 }
    END { print v }' "$work/h"
}

STATUS='' CODE=''
# req METHOD PATH [curl args...]: one request, fresh connection each time.
req() {
  local method=$1 path=$2
  shift 2
  local -a how=(-X "$method")
  [[ $method == HEAD ]] && how=(--head)
  : >"$work/h"
  : >"$work/b"
  STATUS=$(curl -sS --max-time 20 --cacert "$LEASELUA_CA_FILE" "${how[@]}" \
    -H @"$work/auth" -H "x-ms-version: $API_VERSION" \
    -D "$work/h" -o "$work/b" -w '%{http_code}' "$@" "$base$path") || STATUS=ERR
  CODE=$(hdr x-ms-error-code)
  if [[ -z $CODE && -s $work/b ]]; then
    CODE=$(sed -n 's:.*<Code>\(.*\)</Code>.*:\1:p' "$work/b" | head -n1)
  fi
}

ok=0 diff=0 basic_fail=0
# show LABEL EXPECT_STATUS EXPECT_CODE BASIC [EXTRA]
show() {
  local label=$1 est=$2 ecode=$3 basic=$4 extra=${5:-}
  local got="$STATUS ${CODE:--}" want="$est ${ecode:--}" mark
  # an expected code of '*' means the docs give the status but no code
  if [[ $got == "$want" || ($ecode == '*' && $STATUS == "$est") ]]; then
    mark=ok
    ok=$((ok + 1))
  else
    mark="DIFF (Azure docs: $want)"
    diff=$((diff + 1))
    [[ $basic == basic ]] && basic_fail=$((basic_fail + 1))
  fi
  printf '%-44s %-4s %-38s %s%s\n' "$label" "$STATUS" "${CODE:--}" "$mark" \
    "${extra:+  | $extra}"
}

blob=smoke-$(date -u +%Y%m%dT%H%M%SZ)-$$.txt
bpath=/$CONTAINER/$blob
A=$(new_uuid) B=$(new_uuid) WRONG=$(new_uuid)
body() { printf 'leaselua smoke %s\n' "$1" >"$work/payload"; }
put_args=(-H 'x-ms-blob-type: BlockBlob' -H 'Content-Type: application/octet-stream' --data-binary @"$work/payload")

echo "smoke: endpoint $base  container $CONTAINER  blob $blob"
echo "smoke: requested x-ms-version $API_VERSION; lease ids are fresh random GUIDs (A, A2, B, B2)"
printf '%-44s %-4s %-38s %s\n' step status x-ms-error-code verdict
printf '%-44s %-4s %-38s %s\n' ---- ------ --------------- -------

req PUT "/$CONTAINER?restype=container" -H 'Content-Length: 0'
if [[ $STATUS == 409 && $CODE == ContainerAlreadyExists ]]; then
  show "create container (already there)" 409 ContainerAlreadyExists basic
else
  show "create container" 201 "" basic
fi
server=$(hdr Server) version=$(hdr x-ms-version)

body v1
req PUT "$bpath" "${put_args[@]}"
show "put blob (no lease)" 201 "" basic "etag $(hdr ETag)"

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: acquire' \
  -H 'x-ms-lease-duration: -1' -H "x-ms-proposed-lease-id: $A" -H 'Content-Length: 0'
got=$(hdr x-ms-lease-id)
show "acquire A (infinite)" 201 "" basic "x-ms-lease-id $([[ $got == "$A" ]] && echo '= A' || echo "$got")"

body v2
req PUT "$bpath" "${put_args[@]}"
show "put without lease while leased" 412 LeaseIdMissing basic

req PUT "$bpath" "${put_args[@]}" -H "x-ms-lease-id: $WRONG"
show "put with wrong lease while leased" 412 LeaseIdMismatchWithBlobOperation info

req PUT "$bpath" "${put_args[@]}" -H "x-ms-lease-id: $A"
show "put with A while leased" 201 "" basic

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: renew' -H "x-ms-lease-id: $A" -H 'Content-Length: 0'
show "renew A" 200 "" info

A2=$(new_uuid)
req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: change' -H "x-ms-lease-id: $A" \
  -H "x-ms-proposed-lease-id: $A2" -H 'Content-Length: 0'
got=$(hdr x-ms-lease-id)
show "change A -> A2" 200 "" info "x-ms-lease-id $([[ $got == "$A2" ]] && echo '= A2' || echo "$got")"

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: renew' -H "x-ms-lease-id: $A" -H 'Content-Length: 0'
show "renew with old A after change" 409 LeaseIdMismatchWithLeaseOperation info
A=$A2

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: change' -H "x-ms-lease-id: $WRONG" \
  -H "x-ms-proposed-lease-id: $(new_uuid)" -H 'Content-Length: 0'
show "change with wrong lease" 409 LeaseIdMismatchWithLeaseOperation info

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: release' -H "x-ms-lease-id: $WRONG" -H 'Content-Length: 0'
show "release with wrong lease" 409 LeaseIdMismatchWithLeaseOperation info

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: break' -H 'x-ms-lease-break-period: 2' -H 'Content-Length: 0'
lease_time=$(hdr x-ms-lease-time)
show "break, period 2" 202 "" basic "x-ms-lease-time $lease_time"

req HEAD "$bpath"
state_breaking=$(hdr x-ms-lease-state)
show "HEAD while breaking" 200 "" basic "lease-state $state_breaking, lease-status $(hdr x-ms-lease-status)"

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: acquire' \
  -H 'x-ms-lease-duration: -1' -H "x-ms-proposed-lease-id: $B" -H 'Content-Length: 0'
show "acquire B while breaking" 409 LeaseIsBreakingAndCannotBeAcquired info

body v3
req PUT "$bpath" "${put_args[@]}"
show "put without lease while breaking" 412 LeaseIdMissing info

req PUT "$bpath" "${put_args[@]}" -H "x-ms-lease-id: $B"
show "put with B (not holder) while breaking" 412 LeaseIdMismatchWithBlobOperation info

req PUT "$bpath" "${put_args[@]}" -H "x-ms-lease-id: $A"
show "put with A while breaking" 201 "" info

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: renew' -H "x-ms-lease-id: $A" -H 'Content-Length: 0'
show "renew A while breaking" 409 "*" info

sleep 3

req HEAD "$bpath"
state_broken=$(hdr x-ms-lease-state)
if [[ $state_broken == broken ]]; then
  show "HEAD after 3 s" 200 "" basic "lease-state $state_broken, lease-status $(hdr x-ms-lease-status)"
else
  STATUS="$STATUS/$state_broken"
  show "HEAD after 3 s (lease-state)" 200/broken "" basic
fi

body v4
req PUT "$bpath" "${put_args[@]}" -H "x-ms-lease-id: $A"
show "put with stale A after broken" 412 LeaseNotPresentWithBlobOperation info

req PUT "$bpath" "${put_args[@]}"
show "put without lease after broken" 201 "" info

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: renew' -H "x-ms-lease-id: $A" -H 'Content-Length: 0'
show "renew stale A after broken" 409 "*" info

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: acquire' \
  -H 'x-ms-lease-duration: -1' -H "x-ms-proposed-lease-id: $B" -H 'Content-Length: 0'
got=$(hdr x-ms-lease-id)
show "acquire B after broken" 201 "" basic "x-ms-lease-id $([[ $got == "$B" ]] && echo '= B' || echo "$got")"

body v5
req PUT "$bpath" "${put_args[@]}" -H "x-ms-lease-id: $A"
show "put with stale A while B holds" 412 LeaseIdMismatchWithBlobOperation info

req PUT "$bpath" "${put_args[@]}" -H "x-ms-lease-id: $B"
show "put with B" 201 "" basic

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: release' -H "x-ms-lease-id: $A" -H 'Content-Length: 0'
show "release stale A while B holds" 409 LeaseIdMismatchWithLeaseOperation info

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: renew' -H "x-ms-lease-id: $B" -H 'Content-Length: 0'
show "renew B" 200 "" info

B2=$(new_uuid)
req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: change' -H "x-ms-lease-id: $B" \
  -H "x-ms-proposed-lease-id: $B2" -H 'Content-Length: 0'
show "change B -> B2" 200 "" info
B=$B2

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: release' -H "x-ms-lease-id: $B" -H 'Content-Length: 0'
show "release B2" 200 "" info

req HEAD "$bpath"
show "HEAD after release" 200 "" info "lease-state $(hdr x-ms-lease-state), lease-status $(hdr x-ms-lease-status)"

req PUT "$bpath?comp=lease" -H 'x-ms-lease-action: acquire' \
  -H 'x-ms-lease-duration: -1' -H "x-ms-proposed-lease-id: $B" -H 'Content-Length: 0'
show "acquire B2 again after release" 201 "" info

req DELETE "$bpath"
show "delete without lease while leased" 412 LeaseIdMissing info

req DELETE "$bpath" -H "x-ms-lease-id: $WRONG"
show "delete with wrong lease" 412 LeaseIdMismatchWithBlobOperation info

req DELETE "$bpath" -H "x-ms-lease-id: $B"
show "delete with lease B2" 202 "" info

req HEAD "$bpath"
show "HEAD after delete" 404 BlobNotFound info

echo "smoke: Server: ${server:-?}"
echo "smoke: x-ms-version requested $API_VERSION, returned ${version:-?}"
echo "smoke: break period 2 -> x-ms-lease-time ${lease_time:-?}; lease-state ${state_breaking:-?} then ${state_broken:-?} after 3 s"
echo "smoke: $ok steps as the Azure docs say, $diff differ ($basic_fail in the basic path)"
if ((basic_fail > 0)); then
  echo "smoke: FAILED: the basic bearer/https/lease path does not work" >&2
  exit 1
fi
echo "smoke: basic path OK"
