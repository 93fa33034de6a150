/* `sluice filter --rules/--rule`: the rule filters of text/rules.h on text
 * documents (cli/cmd_filter_rules.c); cmd_filter.c hands its arguments
 * over when they name rules. */
#ifndef SLUICE_CLI_FILTER_RULES_H
#define SLUICE_CLI_FILTER_RULES_H

#include "cli/cli.h"

/* 1 when argv has --rules or --rule. */
int sl_filter_rules_wanted(int argc, char **argv);
int sl_filter_rules_main(sl_cli *cli, int argc, char **argv);

#endif
