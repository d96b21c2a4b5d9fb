/* cmd_maestro.c - `hwgym maestro ...`: the MAESTRO-binary drop-in (logic in envs/maestro/maestro_cli.c).
 * The hwgym dispatcher calls hwcli_maestro() with argv[0] == "maestro". */
#include <stdio.h>

#include "maestro/maestro.h"

int hwcli_maestro(int argc, char **argv);

int hwcli_maestro(int argc, char **argv) { return maestro_cli_main(argc, argv, stdout); }
