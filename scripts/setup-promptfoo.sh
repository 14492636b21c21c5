#!/usr/bin/env bash
# Installs Promptfoo for the test of tcrunner's Promptfoo provider
# (tests/promptfoo.rs): target/node/promptfoo/ + promptfoo 0.123.1, run with
# the node 22 that scripts/setup-node.sh installs (Promptfoo needs node >=
# 22.22). Idempotent: npm runs only when the stamp file is missing or
# different. npm output goes to target/node/promptfoo/.npm-install.log.
set -euo pipefail

PROMPTFOO=0.123.1

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEST="$ROOT/target/node/promptfoo"
NODE22="$ROOT/target/node/node22/bin"
[ -x "$NODE22/node" ] || bash "$ROOT/scripts/setup-node.sh"
mkdir -p "$DEST"
STAMP="promptfoo=$PROMPTFOO"
if [ "$(cat "$DEST/.tcrunner-stamp" 2>/dev/null)" != "$STAMP" ]; then
    printf '{"name":"tcrunner-promptfoo","private":true}\n' >"$DEST/package.json"
    if ! (cd "$DEST" && PATH="$NODE22:$PATH" npm install --no-audit --no-fund \
        "promptfoo@$PROMPTFOO" >.npm-install.log 2>&1); then
        cat "$DEST/.npm-install.log" >&2
        exit 1
    fi
    echo "$STAMP" >"$DEST/.tcrunner-stamp"
fi
