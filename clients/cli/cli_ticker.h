/* cli_ticker.h - a progress line for a long single call of the `hwgym` command (one evaluate of
 * a whole network can take seconds): a thread prints "hwgym CMD: WHAT: N s so far" on stderr
 * once the call has run 1 s and then every 2 s on a terminal, every 10 s into a file or pipe
 * (HWGYM_PROGRESS_S=<seconds> sets both), and a closing "done in N s" line when it printed
 * any. Nothing is printed for calls under the first interval. */
#ifndef HWCLI_TICKER_H
#define HWCLI_TICKER_H

typedef struct hwcli_ticker hwcli_ticker;

/* Starts the ticker (NULL when the thread cannot start: the call then runs silently). */
hwcli_ticker *hwcli_ticker_start(const char *cmd, const char *what);
/* Stops and frees it (NULL is fine). */
void hwcli_ticker_stop(hwcli_ticker *t);

#endif
