#!/bin/bash
# dropsleep.sh SECONDS FILE CALL: drop FILE's cache, wait, then kread (which drops again: a no-op)
f=$2; python3 - "$f" <<'PY'
import os,sys
fd=os.open(sys.argv[1],os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)
PY
if [ "${5:-}" = spin ]; then timeout $1 sh -c "while :; do :; done"; else sleep $1; fi
exec "$(dirname "$0")/kread" $f $3 x ${4:-0}  # cc -O2 -o kread kread.c
