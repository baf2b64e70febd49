// libptkfault.so has no API: it is preloaded (LD_PRELOAD) and configured by the environment.
// See fault.c.
