/* SPDX-License-Identifier: MIT */
/* check_includes.py must refuse this: a private header, spaced out. */
  #  include <bo/bo.h>
