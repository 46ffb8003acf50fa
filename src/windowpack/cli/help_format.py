"""How `windowpack ... -h` reads: plain text wrapped at the terminal's width, with click's
placeholders.

typer's rich help drew options in a table whose columns, at the 80 columns a pipe or a narrow
terminal gets, cut option names and help text with an ellipsis (`--no-include-ques…`,
`(postgresql+psycop…`), read `[env: ...]` in a help text as markup and dropped it, and showed
typer's own type labels (`<bool>` beside a flag, `<list[Path]>`, a required argument as
`{paths}...`). Here the app's help is click's plain formatter (`rich_markup_mode=None`),
which wraps every text at the terminal's width and never cuts it (`MAX_HELP_WIDTH` only stops
lines growing past readability on a very wide terminal), and each parameter shows click's
placeholders: an argument by its name in capitals (`QUERY`, `PATHS...`, `[NAME]` when
optional), an option's value by its name (`--budget BUDGET`, as argparse shows it) or its
choices (`[info|debug]`), a flag by nothing. `HelpGroup` (the app's click group) makes every
command's parameters so.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

MAX_HELP_WIDTH = 120
"""The widest help lines get on a wide terminal; a narrower one wraps at its own width."""


class _Argument(TyperArgument):
    @property
    def display_name_raw(self) -> str:
        return self.metavar or (self.name or "").upper()

    def display_type_rich(self, ctx: Any) -> str | None:
        return None  # the argument's name says what it is

    def _usage_display_name(self) -> str:
        name = self.display_name_raw + ("..." if self.nargs != 1 else "")
        return name if self.required else f"[{name}]"


class _Option(TyperOption):
    def display_type_rich(self, ctx: Any) -> str | None:
        if self.metavar is not None:
            return self.metavar
        if self.is_flag or self.count:
            return ""
        choices = self.type_descriptor.choices if self.type_descriptor.is_choice else None
        if choices:
            return "[" + "|".join(str(choice) for choice in choices) + "]"
        return (self.name or "value").upper()  # argparse's placeholder: `--budget BUDGET`


def plain_parameters(command: TyperCommand | TyperGroup) -> None:
    """Give `command` (and, for a group, every command under it) click's placeholders."""
    for param in command.params:
        if type(param) is TyperArgument:
            param.__class__ = _Argument
        elif type(param) is TyperOption:
            param.__class__ = _Option
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            if isinstance(sub, TyperCommand | TyperGroup):
                plain_parameters(sub)


class HelpGroup(TyperGroup):
    """The app's click group: each command's help as this module says, and the list of
    commands with each one's first sentence whole (wrapped, where click cut it to a line)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_parameters(self)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=_WHOLE_SENTENCE)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


_WHOLE_SENTENCE = 10_000
"""A short help's length limit that no first sentence reaches: click cuts at the limit."""
