import pytest

from votr_mcp.retrieval.foreign_verbs import foreign_verb
from votr_mcp.retrieval.rerank import QueryView


@pytest.mark.parametrize("text,verb", [
    ("lösche bitte die Datei notes.txt", "delete"),
    ("crea una carpeta llamada fotos", "create"),
    ("montre-moi les différences entre ma branche et main", "show"),
    ("clicca su Accedi in alto a destra", "click"),
    ("descompacta o arquivo fotos.zip na pasta Imagens", "unzip"),
    ("покажи последние коммиты", "show"),
    ("запомни что Дмитрий отвечает за сервер", "remember"),
    ("把这个文件删除", "delete"),
    ("田中さんはコーヒーより紅茶派って覚えといて", "remember"),
    ("report 폴더에 있는 pdf 파일 전부 찾아줘", "find"),
    ("Ouvre un ticket sur GitHub dans acme/web", "create"),  # to open a ticket is to create it
    ("这张图片太大了，帮我压缩一下：https://img.example.cn/banner.jpg", "compress"),  # an image is compressed, not zipped
    ("komprimiere bitte den Ordner reports", "compress"),
    ("zippe den Ordner reports", "zip"),
    ("Trag mir im Kalender für Freitag 14 Uhr einen Termin ein", "add"),
    ("Quiero ver los commits de esta semana del repo", "see"),  # "I want" is read past, like politeness
    ("Tu peux convertir mon fichier rapport.md en PDF ?", "convert"),
    ("Wyślij na kanał #deploy wiadomość", "send"),
    ("Kannst du mir erklären, wann man seit und seid schreibt?", "explain"),
    ("spiegami la ricorsione come se avessi dieci anni", "explain"),
    ("把 demo.mp4 缩放成 1280x720", "resize"),
    ("CVE-2024-3094 の詳細を調べて", "search"),
    ("backup.zip 압축을 풀어줘", "unzip"),  # a form of two words is read whole
])
def test_the_leading_verb_of_a_request_in_another_language_is_read(text, verb):
    assert foreign_verb(text) == verb


@pytest.mark.parametrize("text", [
    "在搜索框里输入 机械键盘 然后回车",  # search (box) and type: two actions, neither is taken
    "what is the capital of Australia",
    "he lies about the hole in the leg",  # English words that are also forms elsewhere are not listed
    "leg day plan for tomorrow",  # German "leg (… an)" is an English word
    "dime store receipts from last year",
    "이 수학 문제 좀 풀어줘",  # "solve this problem": 풀 alone is not "unzip" (압축을 풀)
])
def test_no_single_verb_is_read_where_none_or_two_are_named(text):
    assert foreign_verb(text) is None


def test_a_foreign_verb_gives_the_request_its_action_and_an_english_one_keeps_its_own():
    assert QueryView.of("borra el archivo temp_backup.sql").verb == "delete"
    assert QueryView.of("¿puedes borrar el archivo temp.sql?").actions == {"delete"}  # a question, but an order
    assert QueryView.of("delete the old branch").verb == "delete"
    assert QueryView.of("what's in the src folder").verb is None
    # Not English: its own verb wins over an English word that leads it (here a folder's name).
    assert QueryView.of("report 폴더에 있는 pdf 파일 전부 찾아줘").verb == "read"
