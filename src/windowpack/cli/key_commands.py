"""`windowpack keys`: the REST service's API keys, created, listed and revoked, and the secret
that signs session tokens, rotated."""

from __future__ import annotations

from typing import Annotated

import typer

from windowpack.cli.help_format import HelpGroup
from windowpack.cli.options import IndexDirOption, StoreOption, open_store
from windowpack.cli.output import errors
from windowpack.config import DEFAULT_STORE

keys = typer.Typer(
    help="API keys of the REST service: create, list, revoke; rotate the session secret.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=HelpGroup,
)


@keys.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(help="What the key is for (shown in `keys list`).")],
    collection: Annotated[
        list[str], typer.Option("--collection", "-c", help="A collection it may use; '*': all.")
    ],
    write: Annotated[bool, typer.Option("--write", help="Allow writes, not only reads.")] = False,
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
) -> None:
    """Create a key; its secret is printed once and stored only as a hash."""
    created = open_store(store, index_dir, None).api_keys.create(
        name, collections=collection, can_write=write
    )
    errors.print(f"key {created.key.key_id} created; keep the secret, it is not shown again:")
    print(created.secret)


@keys.command("list")
def keys_list(store: StoreOption = DEFAULT_STORE, index_dir: IndexDirOption = None) -> None:
    """List the keys (never their secrets)."""
    for key in open_store(store, index_dir, None, create=False).api_keys.list():
        access = "read-write" if key.can_write else "read-only"
        state = "revoked" if key.revoked else "active"
        print(f"{key.key_id}  {state}  {access}  {','.join(key.collections)}  {key.name}")


@keys.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key id from `keys list`.")],
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
) -> None:
    """Revoke a key: it stops working at the next request."""
    open_store(store, index_dir, None, create=False).api_keys.revoke(key_id)
    errors.print(f"key {key_id} revoked")


@keys.command("rotate-session-secret")
def keys_rotate_session_secret(
    store: StoreOption = DEFAULT_STORE, index_dir: IndexDirOption = None
) -> None:
    """Replace the secret that signs session tokens: every token given out so far is refused
    from the next request on (in every replica), and its client starts a new session."""
    open_store(store, index_dir, None, create=False).rotate_session_secret()
    errors.print("session secret rotated: earlier session tokens are no longer accepted")
