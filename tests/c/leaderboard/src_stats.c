/* the statistics module under test, compiled into this group */
#include "clients/cli/lb_stats.c"
