# Sourced by the shell scripts that run pnpm, so that they work on a machine with only Node and npm: `pnpm` here is
# a function, never a program looked up on PATH. It runs PNPM when set (e.g. "pnpm" where it is installed), else
# the pnpm that runs this script (npm_execpath, under `pnpm <script>`), else the version package.json pins, via npx.
if [ -n "${PNPM:-}" ]; then
  read -ra pnpm_command <<<"$PNPM"
elif [[ "$(basename -- "${npm_execpath:-}")" == pnpm* ]]; then
  pnpm_command=(node "$npm_execpath")
else
  pnpm_command=(npx --yes "$(node -p 'require(require("path").resolve(process.argv[1])).packageManager' "$(dirname "${BASH_SOURCE[0]}")/../package.json")")
fi
pnpm() { "${pnpm_command[@]}" "$@"; }
