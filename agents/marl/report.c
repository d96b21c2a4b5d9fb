/* report.c - `hwgym-marl report`: the paper-comparison report tool (docs/marl.md). */
#include <stdio.h>

int marl_report_main(int argc, char **argv);

int marl_report_main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "hwgym-marl report: not built yet\n");
    return 2;
}
