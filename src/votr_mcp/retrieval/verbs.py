"""The verbs a request or a tool may lead with, and the action each asks for: a class of ACTIONS
(create, read, update, delete, send, run), or the verb itself when it is too specific for its class
(merge, push, book, refund: the specific operations a tool either names or does not do). How a
request's words are read into one of these is retrieval/intent.py."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ACTION_OF", "ACTIONS", "LITERAL_OPERATIONS", "OFFERED_BY_OBJECT", "OTHER_VERBS", "SYNONYMS", "action_word",
           "specific_operations", "verb_forms"]

# What a verb asks for: read by the need splitter (a need names an action) and by the rerank
# (does the tool name's action match the request's).
ACTIONS: dict[str, tuple[str, ...]] = {
    "create": ("create", "add", "new", "make", "insert", "write", "generate", "build", "register", "upload",
               "save", "put", "append", "compose", "draft", "record", "remember", "memorize",
               "store", "import", "raise"),
    "read": ("get", "retrieve", "fetch", "read", "show", "view", "describe", "list", "find", "search", "query",
             "lookup", "look", "check", "display", "see", "browse", "download", "export", "inspect", "count"),
    "update": ("update", "edit", "modify", "change", "set", "rename", "patch", "replace", "move", "mark", "toggle",
               "enable", "disable", "configure", "assign", "merge", "resize", "upscale", "convert", "transition",
               "renew", "reschedule", "postpone"),
    "delete": ("delete", "remove", "destroy", "drop", "clear", "erase", "cancel", "archive", "close", "revoke",
               "unsubscribe", "purge", "trash"),
    "send": ("send", "post", "notify", "email", "reply", "share", "publish", "tweet", "forward", "invite",
             "comment"),
    "run": ("run", "execute", "exec", "invoke", "start", "trigger", "launch", "call", "deploy", "stop",
            "restart", "test", "scan", "analyze", "analyse", "summarize", "summarise", "translate", "compute",
            "calculate", "evaluate"),
}
ACTION_OF = {verb: action for action, verbs in ACTIONS.items() for verb in verbs}

# Verbs people use for an action that names no class above ("push", "merge", "stash"): the verb is
# its own action, supported only by a tool whose name or description says it.
OTHER_VERBS = frozenset({"push", "pull", "merge", "rebase", "stash", "clone", "tag", "commit", "checkout", "switch",
                         "print", "zip", "unzip", "compress", "extract", "encrypt", "decrypt", "copy",
                         "undo", "revert", "restore", "backup", "sync", "play", "pause", "buy", "pay", "order",
                         "sign", "log", "install", "uninstall", "chmod", "mount", "reboot", "shutdown", "kill",
                         "alarm", "remind", "wake", "fork", "star", "like", "follow", "subscribe", "stage",
                         "click", "type", "fill", "capture", "screenshot", "sort", "reset", "unstage"})
# (Not "compare": the agent compares what tools read; 44 of the 58 answerable requests of our sets and
# the shared benchmarks that lead with it are served by a tool that never says it.)
# Verbs read as another action first (SYNONYMS, ACTIONS) are not listed above: they never reach it.
SYNONYMS = {"wipe": "delete", "empty": "delete", "forget": "delete", "erase": "delete", "rm": "delete",
            "scrap": "delete", "ditch": "delete", "nuke": "delete", "unsend": "delete",
            "jot": "create", "note": "create", "grab": "read", "tell": "read", "give": "read",
            "open": "read", "visit": "read", "navigate": "read", "duplicate": "copy", "reserve": "book",
            "bump": "update", "shift": "move", "flip": "update", "tweak": "update", "amend": "update",
            "shoot": "send",
            "favourite": "star", "favorite": "star", "abort": "cancel", "halt": "stop", "press": "click",
            "tap": "click", "buzz": "notify", "dump": "read", "scrape": "read", "crawl": "read",
            "decompress": "unzip", "gunzip": "unzip", "untar": "unzip", "shove": "move"}

# Verbs too specific for their class: "merge a branch" is not served by a tool that updates. Explaining,
# brainstorming and rewriting are the assistant's own work, done by a tool only where one says so.
# Booking (a flight, a table, a room) is done by a tool that books or reserves, not by one that creates.
_LITERAL = frozenset({"merge", "push", "pull", "rebase", "stash", "clone", "tag", "copy", "zip", "print", "undo", "book",
                      "revert", "play", "order", "pay", "buy", "explain", "brainstorm", "rewrite", "proofread",
                      "paraphrase", "rephrase", "reword",
                      # what one does to an account, a post or a payment, named by the tools that do it
                      "refund", "withdraw", "deposit", "unfollow", "mute", "unmute", "ban", "unban", "snooze", "pin",
                      "unpin", "squash", "ping", "retweet", "repost", "upvote", "downvote", "unstar", "unsubscribe",
                      "fork",
                      # what a file, a sheet or a program is given or taken: a tool that does it names it
                      "unzip", "encrypt", "decrypt", "lock", "unlock", "install", "uninstall", "chmod",
                      # answering what someone asked of you (an invite, a change request, a pull request)
                      "accept", "decline", "approve", "reject",
                      # sending or running later, a feature of its own ("schedule the email for 8am")
                      "schedule"})


# Specific operations a catalog either offers by name or not at all: no tool that merely lists or
# edits "pushes" commits or "zips" a folder. Buying, paying and ordering are left out: shops describe
# them as finding products.
LITERAL_OPERATIONS = _LITERAL - {"buy", "pay", "order"}
# Booking is often served by a tool that finds what is booked (a flight search for "book a flight"):
# it counts as offered where a tool names the thing booked.
OFFERED_BY_OBJECT = frozenset({"book"})


def specific_operations(words: Sequence[str]) -> frozenset[str]:
    """The specific operations (:data:`_LITERAL`: push, refund, pin…) a request's words say anywhere,
    as verb or noun ("create a refund for the charge", "in the group, pin the message"): a tool named
    by one does what the request says, whatever its leading verb."""
    return frozenset(w for w in words if w in _LITERAL and w not in _NOUNS_TOO)


# Specific operations whose word is as often a thing ("on its schedule"): read only as the leading verb.
_NOUNS_TOO = frozenset({"schedule", "decline"})


def verb_forms(verb: str) -> frozenset[str]:
    """The words that ask for ``verb`` (an :func:`action_word`): itself and its synonyms ("book": book,
    reserve), and the words a tool that does it says instead (a mode that makes a file executable)."""
    return frozenset({verb, *(w for w, meant in SYNONYMS.items() if meant == verb), *_SAID_AS.get(verb, ())})


_SAID_AS = {"chmod": ("executable",)}


def action_word(word: str) -> str | None:
    """The action a verb asks for: the verb itself when it is specific (merge, push, stash) or names
    no class, else its class in ACTIONS (or its synonym's); None for words that are no action."""
    word = SYNONYMS.get(word, word)
    if word in _LITERAL:
        return word
    if word in ACTION_OF:
        return ACTION_OF[word]
    return word if word in OTHER_VERBS else None
