#!/usr/bin/env bash
# Usage: test-install.sh BUILD
# `meson install --destdir` of BUILD into a temporary folder: every file a host needs is there
# (binaries, units, sysusers.d and tmpfiles.d snippets, man pages, guides, sample configurations),
# the installed units and snippets name the configured sbindir and sysconfdir, not /usr/sbin and
# /etc (unless that is the configuration), the sample configurations name the configured
# sysconfdir and datadir (where their pristine copies are), the units' ConfigurationDirectory=
# is the directory the tmpfiles snippets make (none outside /etc), and a second install keeps an
# edited configuration.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
[ $# -eq 1 ] || { grep -m1 '^# Usage: ' "$0" | sed 's/^# //' >&2; exit 2; }
build=$(realpath "$1")
need meson jq systemd-analyze
work=$(mktemp -d /tmp/attestd-install.XXXXXX)
trap cleanup_lib EXIT
dest=$work/dest

opt() { meson introspect --buildoptions "$build" | jq -r --arg n "$1" '.[] | select(.name == $n) | .value'; }
prefix=$(opt prefix)
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
sbindir=$(abs "$(opt sbindir)") bindir=$(abs "$(opt bindir)") sysconfdir=$(abs "$(opt sysconfdir)")
mandir=$(abs "$(opt mandir)") datadir=$(abs "$(opt datadir)")
echo "# prefix $prefix: sbindir $sbindir, sysconfdir $sysconfdir"

meson install -C "$build" --no-rebuild --destdir "$dest" >"$work/install.log" 2>&1 ||
        { tail -20 "$work/install.log" >&2; fail "meson install failed"; }

# units, sysusers.d and tmpfiles.d: where the install put them (systemd's or below the prefix)
unit=$(cd "$dest" && find . -path '*/systemd/system/attestd.service' | sed 's|^\.||')
[ -n "$unit" ] || fail "no attestd.service installed"
unitdir=$(dirname "$unit")
libdir_sd=$(dirname "$(dirname "$unitdir")") # .../lib/systemd/system -> .../lib
want=(
        "$sbindir/attestd" "$sbindir/attest-agent" "$bindir/attestctl"
        "$unitdir/attestd.service" "$unitdir/attestd.socket" "$unitdir/attest-agent.service"
        "$mandir/man8/attestd.8" "$mandir/man8/attest-agent.8" "$mandir/man1/attestctl.1"
        "$mandir/man5/attestd-policy.5"
        "$datadir/doc/attestd/README.md" "$datadir/doc/attestd/SECURITY.md"
        "$datadir/doc/attestd/api.md" "$datadir/doc/attestd/design-notes.md"
        "$datadir/doc/attestd/examples/attestd.conf" "$datadir/doc/attest-agent/examples/agent.conf"
        "$sysconfdir/attestd/attestd.conf" "$sysconfdir/attest-agent/agent.conf"
)
for f in "${want[@]}"; do
        [ -f "$dest$f" ] || fail "not installed: $f"
done
for kind in sysusers.d tmpfiles.d; do
        for n in attestd attest-agent; do
                n=$(cd "$dest" && find . -path "*/$kind/$n.conf" | sed 's|^\.||')
                [ -n "$n" ] || fail "no $kind snippet for $n"
        done
done
ok "installed: ${#want[@]} files and 4 snippets (units in $unitdir, snippets beside $libdir_sd)"
[ "$(stat -c %a "$dest$sbindir/attestd")" = 755 ] || fail "attestd is not mode 0755"
[ "$(stat -c %a "$dest$sysconfdir/attestd/attestd.conf")" = 644 ] || fail "attestd.conf is not 0644 (no secret in it: attestd must read it)"

# the configured places in the installed units and snippets
grep -qx "ExecStart=$sbindir/attestd --config $sysconfdir/attestd/attestd.conf" "$dest$unitdir/attestd.service" ||
        fail "attestd.service: $(grep ExecStart= "$dest$unitdir/attestd.service")"
grep -qx "ExecStart=$sbindir/attest-agent --config $sysconfdir/attest-agent/agent.conf" \
        "$dest$unitdir/attest-agent.service" ||
        fail "attest-agent.service: $(grep ExecStart= "$dest$unitdir/attest-agent.service")"
if [ "$sbindir" != /usr/sbin ]; then
        ! grep -l '/usr/sbin/' "$dest$unitdir"/attest* || fail "an installed unit still names /usr/sbin"
fi
if [ "$sysconfdir" != /etc ]; then
        ! grep -rl '[ =]/etc/' "$dest$unitdir"/attest* "$dest$libdir_sd"/*.d ||
                fail "an installed unit or snippet still names /etc"
        grep -q "^d $sysconfdir/attestd 0750 root attestd" "$dest$libdir_sd/tmpfiles.d/attestd.conf" ||
                fail "tmpfiles.d/attestd.conf does not create $sysconfdir/attestd"
fi
ok "units and snippets name $sbindir and $sysconfdir"

# the configuration directory the units read is the one the tmpfiles snippets make (group NAME)
for n in attestd attest-agent; do
        grep -q "^d $sysconfdir/$n 0750 root $n -$" "$dest$libdir_sd/tmpfiles.d/$n.conf" ||
                fail "tmpfiles.d/$n.conf does not make $sysconfdir/$n: $(grep '^d ' "$dest$libdir_sd/tmpfiles.d/$n.conf")"
        u=$dest$unitdir/${n}.service
        if [ "$sysconfdir" = /etc ]; then
                grep -qx "ConfigurationDirectory=$n" "$u" || fail "$n.service: no ConfigurationDirectory=$n"
        elif grep -q '^ConfigurationDirectory' "$u"; then
                fail "$n.service makes /etc/$n, but reads $sysconfdir/$n: $(grep '^ConfigurationDirectory' "$u")"
        fi
done
ok "configuration directories agree: $sysconfdir/attestd and $sysconfdir/attest-agent (tmpfiles$([ "$sysconfdir" = /etc ] && echo ' and ConfigurationDirectory='))"

# the samples say where they are and where their pristine copies are, under this prefix
for pair in "attestd:attestd/attestd.conf" "attest-agent:attest-agent/agent.conf"; do
        pkg=${pair%%:*} conf=${pair#*:}
        for f in "$dest$sysconfdir/$conf" "$dest$datadir/doc/$pkg/examples/${conf#*/}"; do
                grep -q "^# $sysconfdir/$conf:" "$f" || fail "$f does not name $sysconfdir/$conf: $(head -1 "$f")"
                grep -q "$datadir/doc/$pkg/examples/" "$f" || fail "$f does not name $datadir/doc/$pkg/examples/"
                if [ "$datadir" != /usr/share ] && grep -q '/usr/share/doc' "$f"; then
                        fail "$f names /usr/share/doc under the prefix $prefix"
                fi
        done
done
ok "the samples name $sysconfdir and their pristine copies in $datadir/doc/*/examples"

# the source units are valid as they are, and the installed ones are what they say
for u in attestd.service attestd.socket attest-agent.service; do
        drop=()
        [ "$sysconfdir" = /etc ] || drop=(-e '/^ConfigurationDirectory/d')
        diff <(sed -e "s|/usr/sbin/|$sbindir/|g" -e "s|/etc/|$sysconfdir/|g" ${drop[@]+"${drop[@]}"} "$TOP/systemd/$u") \
                "$dest$unitdir/$u" >/dev/null || fail "$u: installed copy differs beyond the prefix"
done

# a second install keeps the administrator's configuration
echo "verifier = https://edited.example:8443" >>"$dest$sysconfdir/attest-agent/agent.conf"
echo "# edited" >>"$dest$sysconfdir/attestd/attestd.conf"
meson install -C "$build" --no-rebuild --destdir "$dest" >"$work/install2.log" 2>&1 ||
        fail "second meson install failed"
grep -q 'edited.example' "$dest$sysconfdir/attest-agent/agent.conf" || fail "agent.conf overwritten"
grep -q '^# edited' "$dest$sysconfdir/attestd/attestd.conf" || fail "attestd.conf overwritten"
ok "a second install kept both edited configuration files"
echo "# install checks passed"
