/* Compiles agents/search/resume.c into the search test binary (see src_cli.c). */
#include "agents/search/resume.c"
