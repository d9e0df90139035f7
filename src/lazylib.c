#include "lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int mcp_lazylib_load(const char *const *names, const mcp_lazysym *syms, char *err, size_t errlen)
{
    void *lib = NULL;
    const char *const *n;
    const char *why = "";
    for (n = names; *n != NULL && lib == NULL; n++) {
        lib = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            why = dlerror();
    }
    if (lib == NULL) {
        snprintf(err, errlen, "cannot load %s (%s)", names[0], why ? why : "not found");
        return -1;
    }
    for (; syms->name != NULL; syms++) {
        /* POSIX: a data pointer from dlsym may be converted to a function pointer. */
        void *p = dlsym(lib, syms->name);
        if (p == NULL) {
            snprintf(err, errlen, "%s has no %s: the library is too old", names[0], syms->name);
            return -1;
        }
        memcpy(syms->slot, &p, sizeof p);
    }
    /* Never closed: the entry points stay valid for the life of the process, like a linked one. */
    return 0;
}
