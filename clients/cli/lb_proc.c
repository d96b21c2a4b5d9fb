/* lb_proc.c - see lb_proc.h */
#include "lb_proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void lb_nap_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

char *lb_last_line(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char line[512], last[512] = "";
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (*line) snprintf(last, sizeof last, "%s", line);
    }
    fclose(f);
    return *last ? strdup(last) : NULL;
}
