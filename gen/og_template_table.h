/* The templates and parts built into the library: every templates/NAME.tmpl,
 * embedded by CMakeLists.txt (cmake/embed.cmake), in a table it generates. */
#ifndef OG_TEMPLATE_TABLE_H
#define OG_TEMPLATE_TABLE_H

#include <stddef.h>

typedef struct og_builtin_template {
    const char *name; /* NAME of templates/NAME.tmpl */
    const char *text;
} og_builtin_template;

extern const og_builtin_template og_builtin_templates[];
extern const size_t og_builtin_template_count;

#endif /* OG_TEMPLATE_TABLE_H */
