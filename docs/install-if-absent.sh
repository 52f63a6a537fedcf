#!/bin/sh
# meson install script: install-if-absent.sh SRC DIR NAME MODE
# Copies SRC to $DESTDIR/DIR/NAME with MODE unless a file is already there: a sample
# configuration never overwrites the administrator's.
set -eu
src=$1 dir=${DESTDIR:-}$2 name=$3 mode=$4
if [ -e "$dir/$name" ] || [ -L "$dir/$name" ]; then
        echo "keeping $dir/$name (the sample is $src)"
        exit 0
fi
mkdir -p "$dir"
cp "$src" "$dir/$name.tmp.$$"
chmod "$mode" "$dir/$name.tmp.$$"
mv "$dir/$name.tmp.$$" "$dir/$name"
echo "installing sample $dir/$name"
