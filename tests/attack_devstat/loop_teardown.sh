#!/bin/sh
# Undoes loop_setup.sh.
L=$(losetup -j /var/tmp/rev-loop.img | cut -d: -f1)
umount /var/tmp/rev-mnt
[ -n "$L" ] && losetup -d "$L"
rm -f /var/tmp/rev-loop.img
rmdir /var/tmp/rev-mnt
