/* the leaderboard's suite, file and scoring modules under test, compiled into this group */
#include "clients/cli/lb_curve.c"
#include "clients/cli/lb_db.c"
#include "clients/cli/lb_suite.c"
