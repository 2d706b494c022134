# Sourced by the bench scripts that run an older template beside the current
# one in the same ogtune binary: builds, extracts the templates of commit
# $base (the parent of the commit whose subject starts with $1, unless the
# script was given a commit) into a temporary folder that is removed on exit,
# and sets $old_templates (for OG_TEMPLATE_DIR) and $log (the log file in
# bench/logs/, named after the date, $2 and the device).
base=${base:-$(git log -n1 --format=%H --grep "^$1")^}
scripts/build.sh
old_root=$(mktemp -d)
trap 'rm -rf "$old_root"' EXIT
git archive "$base" templates | tar -x -C "$old_root"
old_templates=$old_root/templates
log=bench/logs/$(date +%Y-%m-%d)-$2-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
