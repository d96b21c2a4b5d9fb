/* SVG renderer and the render entry point used by `hwgym render`. */
#include "mm_fixture.h"

#include <stdio.h>
#include <unistd.h>

static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *q = s; (q = strstr(q, needle)); q++) n++;
    return n;
}

Test(mmap_render, one_rect_per_cmem_allocation) {
    mm_problem *p = fx_problem(FX2);
    mm_game *g = mm_game_new(p);
    int acts[5] = {MM_NOCOPY, MM_COPY, MM_COPY, MM_NOCOPY, MM_NOCOPY};
    for (int i = 0; i < 5; i++) mm_game_step(g, acts[i]);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(mm_render_svg(g, f, "fx2 <layout>"), 0);
    fclose(f);
    cr_assert(strncmp(buf, "<svg", 4) == 0);
    cr_assert(strstr(buf, "</svg>"));
    cr_assert(strstr(buf, "fx2 &lt;layout>"), "title is escaped");
    /* A (kept [0,3]), B, C, D: 4 allocations; the second A use has an empty interval */
    cr_assert_eq(count(buf, "<title>buffer"), 4, "%s", buf);
    cr_assert(strstr(buf, "buffer 1 tensor 2 "));
    free(buf);
    mm_game_free(g);
    mm_problem_free(p);
}

Test(mmap_render, render_file_for_the_cli) {
    char out[] = "/tmp/mmap_render_XXXXXX";
    int fd = mkstemp(out);
    cr_assert(fd >= 0);
    close(fd);
    hw_err err = {0};
    cr_assert_eq(mm_render_file("alexnet_train_batch_32", 0, "heuristic", NULL, out, &err), 0, "%s", err.msg);
    FILE *f = fopen(out, "r");
    char head[5] = {0};
    cr_assert_eq(fread(head, 1, 4, f), 4);
    fclose(f);
    cr_assert_str_eq(head, "<svg");
    /* an actions file that is illegal still renders the (lost) layout; a bad policy fails */
    char acts[] = "/tmp/mmap_acts_XXXXXX";
    fd = mkstemp(acts);
    cr_assert(write(fd, "\"222\"", 5) == 5);
    close(fd);
    cr_assert_neq(mm_render_file("alexnet_train_batch_32", 0, NULL, acts, out, &err), 0, "3 actions are too few");
    cr_assert(strstr(err.msg, "point"), "%s", err.msg);
    cr_assert_neq(mm_render_file("nope", 0, "heuristic", NULL, out, &err), 0);
    unlink(out);
    unlink(acts);
}
