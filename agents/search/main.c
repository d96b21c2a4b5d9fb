/* main.c - hwgym-search (cli.c has everything; tests call hs_main in-process). */
#include "search.h"

int main(int argc, char **argv) { return hs_main(argc, argv); }
