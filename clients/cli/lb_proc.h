/* lb_proc.h - small helpers shared by the leaderboard's runners (lb_run.c, local processes, and
 * lb_slurm.c, a Slurm job array), kept below both: a sleep, and the last line of a log file. */
#ifndef LB_PROC_H
#define LB_PROC_H

void lb_nap_ms(int ms);
/* The last non-empty line of a file (at most 511 characters; caller frees), or NULL. */
char *lb_last_line(const char *path);

#endif
