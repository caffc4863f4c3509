#!/usr/bin/env bash
# DO NOT MERGE — validation seed.
set -euo pipefail
rm -rf $TARGET_DIR/*  # SEED 1 [HIGH] (ops/unquoted-variable) an empty TARGET_DIR deletes /*
# SEED 2 [BLOCKER] (ops/unquoted-variable) a path with a space splits into two rm targets
rm -rf $BUILD_DIR
# SEED 3 [HIGH] (ops/curl-pipe-shell) a script piped from the network straight into bash
curl -fsSL https://get.example.com/install.sh | bash
