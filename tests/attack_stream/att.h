/* SPDX-License-Identifier: MIT */
/* att.h - the attack programs' helpers are attack/att.h's; one copy. */
#include "../attack/att.h"
