/* tl_yaml.c - a YAML document (libyaml) as a jansson tree, for `hwgym timeloop-model`.
 * Mappings become objects, sequences arrays, every scalar a string (callers convert; the
 * Timeloop files are untyped YAML). Anchors/aliases and multi-document files are refused. */
#include "tl_yaml.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

static json_t *node(yaml_parser_t *p, yaml_event_t *ev, const char *path, hw_err *err, int depth);

static int next(yaml_parser_t *p, yaml_event_t *ev, const char *path, hw_err *err) {
    if (!yaml_parser_parse(p, ev)) {
        hw_fail(err, HW_E_BAD_CONFIG, "%s: YAML error at line %zu: %s", path, p->problem_mark.line + 1,
                p->problem ? p->problem : "syntax");
        return -1;
    }
    return 0;
}

static json_t *node(yaml_parser_t *p, yaml_event_t *ev, const char *path, hw_err *err, int depth) {
    if (depth > 64) {
        hw_fail(err, HW_E_BAD_CONFIG, "%s: nesting deeper than 64", path);
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return json_stringn((const char *)ev->data.scalar.value, ev->data.scalar.length);
    case YAML_ALIAS_EVENT:
        hw_fail(err, HW_E_BAD_CONFIG, "%s: line %zu: YAML aliases are not supported", path, ev->start_mark.line + 1);
        return NULL;
    case YAML_SEQUENCE_START_EVENT: {
        json_t *a = json_array();
        for (;;) {
            yaml_event_t e;
            if (next(p, &e, path, err)) {
                json_decref(a);
                return NULL;
            }
            if (e.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&e);
                return a;
            }
            json_t *v = node(p, &e, path, err, depth + 1);
            yaml_event_delete(&e);
            if (!v) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, v);
        }
    }
    case YAML_MAPPING_START_EVENT: {
        json_t *o = json_object();
        for (;;) {
            yaml_event_t k;
            if (next(p, &k, path, err)) {
                json_decref(o);
                return NULL;
            }
            if (k.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&k);
                return o;
            }
            if (k.type != YAML_SCALAR_EVENT) {
                hw_fail(err, HW_E_BAD_CONFIG, "%s: line %zu: only scalar keys are supported", path, k.start_mark.line + 1);
                yaml_event_delete(&k);
                json_decref(o);
                return NULL;
            }
            char key[256];
            size_t kline = k.start_mark.line + 1;
            if (k.data.scalar.length >= sizeof key || memchr(k.data.scalar.value, 0, k.data.scalar.length)) {
                hw_fail(err, HW_E_BAD_CONFIG, "%s: line %zu: a key of %zu bytes (at most %zu)", path, kline, k.data.scalar.length, sizeof key - 1);
                yaml_event_delete(&k);
                json_decref(o);
                return NULL;
            }
            snprintf(key, sizeof key, "%.*s", (int)k.data.scalar.length, (const char *)k.data.scalar.value);
            yaml_event_delete(&k);
            if (json_object_get(o, key)) { /* YAML says keys are unique; last-wins hid typos and edits */
                hw_fail(err, HW_E_BAD_CONFIG, "%s: line %zu: duplicate key '%s'", path, kline, key);
                json_decref(o);
                return NULL;
            }
            yaml_event_t e;
            if (next(p, &e, path, err)) {
                json_decref(o);
                return NULL;
            }
            json_t *v = node(p, &e, path, err, depth + 1);
            yaml_event_delete(&e);
            if (!v) {
                json_decref(o);
                return NULL;
            }
            json_object_set_new(o, key, v);
        }
    }
    default:
        hw_fail(err, HW_E_BAD_CONFIG, "%s: unexpected YAML event", path);
        return NULL;
    }
}

json_t *tl_yaml_load(const char *path, hw_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        hw_fail(err, HW_E_BAD_CONFIG, "%s: cannot open", path);
        return NULL;
    }
    struct stat st; /* a size cap before parsing: a 100 MB YAML cost 2.26 GB and 26 s (issue 28) */
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > TL_YAML_MAX_BYTES) {
        if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) hw_fail(err, HW_E_BAD_CONFIG, "%s: not a regular file", path);
        else hw_fail(err, HW_E_LIMIT, "%s: %lld bytes exceed the limit of %d for a Timeloop YAML file", path, (long long)st.st_size, TL_YAML_MAX_BYTES);
        fclose(f);
        return NULL;
    }
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    json_t *root = NULL;
    int docs = 0, ok = 1;
    for (;;) {
        yaml_event_t ev;
        if (next(&p, &ev, path, err)) {
            ok = 0;
            break;
        }
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            hw_fail(err, HW_E_BAD_CONFIG, "%s: more than one YAML document", path);
            yaml_event_delete(&ev);
            ok = 0;
            break;
        }
        if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT ||
            t == YAML_ALIAS_EVENT) {
            root = node(&p, &ev, path, err, 0);
            if (!root) ok = 0;
        }
        yaml_event_delete(&ev);
        if (!ok) break;
    }
    yaml_parser_delete(&p);
    fclose(f);
    if (!ok) {
        json_decref(root);
        return NULL;
    }
    if (!root) hw_fail(err, HW_E_BAD_CONFIG, "%s: empty YAML document", path);
    return root;
}
