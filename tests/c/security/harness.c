/* harness.c - the security group reuses the server tests' in-process harness (one copy). */
#include "../server/harness.c"
