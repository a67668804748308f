/* env.c - environment knobs, read in one place so they are easy to find. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

const char *tocl_env(const char *name) {
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

int tocl_env_flag(const char *name) {
    const char *v = tocl_env(name);
    if (!v)
        return 0;
    return !strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on");
}

int tocl_env_off(const char *name) {
    const char *v = tocl_env(name);
    if (!v)
        return 0;
    return !strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off");
}
