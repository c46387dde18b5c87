#!/usr/bin/env bash
# Compile every Coq file of proofs/coq in dependency order (the order of _CoqProject)
# and check that it is complete: no Admitted/admit/Axiom in the sources, and every
# `Print Assumptions` in them answers "Closed under the global context".
# Needs coqc with mathcomp (Debian: coq libcoq-mathcomp-ssreflect libcoq-mathcomp-algebra).
# Exit status: 0 all checked, 1 a check failed, 2 coqc is missing.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v coqc >/dev/null 2>&1; then
    echo "check.sh: coqc not found; install coq, libcoq-mathcomp-ssreflect and libcoq-mathcomp-algebra" >&2
    exit 2
fi
mapfile -t files < <(grep -E '\.v$' _CoqProject)
if grep -nwE 'Admitted|admit|Axiom|Axioms|Conjecture|Parameter|Parameters' "${files[@]}"; then
    echo "check.sh: the sources above are incomplete or assume axioms" >&2
    exit 1
fi
status=0
start=$(date +%s)
for f in "${files[@]}"; do
    out=$(coqc -Q . OptAccept -w -notation-overridden,-ambiguous-paths "$f" 2>&1) || {
        printf '%s\n' "$out" >&2
        echo "check.sh: $f does not compile" >&2
        exit 1
    }
    asked=$(grep -c '^Print Assumptions' "$f" || true)
    closed=$(grep -c '^Closed under the global context$' <<<"$out" || true)
    if [ "$asked" != "$closed" ] || grep -qvE '^Closed under the global context$|^$' <<<"$out"; then
        printf '%s\n' "$out" >&2
        echo "check.sh: $f: $closed of $asked theorems closed under the global context" >&2
        status=1
    else
        echo "$f: $asked theorems closed under the global context"
    fi
done
echo "check.sh: compiled ${#files[@]} files in $(( $(date +%s) - start )) s"
exit $status
