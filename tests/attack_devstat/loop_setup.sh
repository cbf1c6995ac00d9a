#!/bin/sh
# A device of our own for these checks (root): a 400 MiB image file under
# /var/tmp on a loop device with O_DIRECT to its backing file, a GPT with one
# partition, ext4 on it, mounted on /var/tmp/rev-mnt.  Nothing else reads or
# writes it, so its stat counters are the benchmark's alone.  Prints the loop
# device.  Undo with loop_teardown.sh.
set -e
truncate -s 400M /var/tmp/rev-loop.img
L=$(losetup -fP --direct-io=on --show /var/tmp/rev-loop.img)
parted -s "$L" mklabel gpt mkpart p1 ext4 1MiB 100%
sleep 1
mkfs.ext4 -q -F "${L}p1"
mkdir -p /var/tmp/rev-mnt
mount "${L}p1" /var/tmp/rev-mnt
echo "$L"
