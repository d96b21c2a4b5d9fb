/* lb_page.h - the leaderboard's pages from its results document (lb_score.h):
 * a self-contained HTML page (inline CSS and SVG: no script, no network) and a markdown page.
 * Owns: the wording and layout of both; every number comes from the results document. */
#ifndef LB_PAGE_H
#define LB_PAGE_H

#include <jansson.h>

/* `cmd` is the command that recomputes the page (quoted on it); `note` (may be NULL) is text put
 * at the top (markdown verbatim; HTML escaped, one paragraph per blank-line-separated block).
 * Return 0 or -1 (errno set). */
int lb_page_html(const json_t *res, const char *path, const char *cmd, const char *note);
int lb_page_md(const json_t *res, const char *path, const char *cmd, const char *note);

#endif
