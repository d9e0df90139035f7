/* NULL-ended vectors of strings copied into one block (strvec.h). */
#include "strvec.h"

#include <stdlib.h>
#include <string.h>

size_t mcp_strvec_size(char *const *v, size_t *count)
{
    size_t n = 0, bytes = 0;
    for (; v != NULL && v[n] != NULL; n++)
        bytes += strlen(v[n]) + 1;
    *count = n;
    return bytes;
}

char **mcp_strvec_copy(char *const *v, char **slots, char **at)
{
    size_t i;
    for (i = 0; v != NULL && v[i] != NULL; i++) {
        size_t n = strlen(v[i]) + 1;
        memcpy(*at, v[i], n);
        slots[i] = *at;
        *at += n;
    }
    slots[i] = NULL;
    return slots;
}

char **mcp_strvec_dup(char *const *v)
{
    size_t n, bytes = mcp_strvec_size(v, &n);
    char **out = malloc((n + 1) * sizeof *out + bytes), *at;
    if (out == NULL)
        return NULL;
    at = (char *)(out + n + 1);
    return mcp_strvec_copy(v, out, &at);
}
