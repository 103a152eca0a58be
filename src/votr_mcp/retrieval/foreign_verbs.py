"""The action a request in another language asks for, read from its verbs without a model.

The rerank and the abstention evidence read a request's action from its leading English verb
(intent.py). A request in German, Spanish, French, Italian, Portuguese, Dutch, Russian, Polish,
Chinese, Japanese or Korean named none, so "lösche die Datei" had no action: a tool that only lists
files scored as well as one that deletes, and a near-miss ("borra el archivo" where nothing
deletes) was not seen as one. Verbs are a small closed class, so a table does it: each language's
imperative, familiar and infinitive forms of the verbs people use with tools, mapped to the English
verb whose action verbs.action_word gives.

Words are read in Latin and Cyrillic script from the start of the request (past a few words of
politeness or of wanting: "quiero ver …" reads "ver"), and only forms that are no English word are
listed ("lies", "change", "retire", "leg", "dime" are not), so an English request that leads with
no verb of its own is not misread. Chinese, Japanese and Korean write no spaces and put the verb
anywhere (last, in Japanese and Korean), so there a verb is found as a substring, and a request
naming verbs of two different actions ("在搜索框里输入": search box, type) names no single one.
"""

from __future__ import annotations

import re

from votr_mcp.retrieval.intent import opens_new

__all__ = ["foreign_verb"]

# English verb: its forms in de, es, fr, it, pt, nl, ru, and a few in pl (words, lower case).
_WORDS = """
create: erstelle erstell erstellen lege anlegen crea crear cree créé crée créer creare cria crie criar
  maak aanmaken создай создайте создать
add: füge füg hinzufügen añade añadir agrega agregar ajoute ajouter aggiungi aggiungere adiciona adicione
  adicionar voeg toevoegen добавь добавьте добавить
  trag
make: mache mach haz hacer fais faire fai faça faz сделай
write: schreibe schreib schreiben escribe escribir écris écrire scrivi scrivere escreve escreva escrever
  schrijf напиши запиши написать
save: speichere speicher speichern guarda guardar enregistre enregistrer sauvegarde sauvegarder salva salvare
  salvar sla сохрани сохранить
show: zeige zeig zeigen muestra muéstrame muestrame mostrar enséñame montre montre-moi montrer affiche afficher
  mostra mostrami mostre покажи покажите показать выведи
  pokaż
list: liste listar lister elenca elencare lista liste перечисли
find: finde finden encuentra encontrar trouve trouver trova trovare encontre encontra vind найди найти
search: suche suchen busca buscar cherche chercher recherche rechercher cerca cercare procura
  busque zoek поищи ищи искать
open: öffne öffnen abre abrir ouvre ouvrir apri aprire abra открой открыть
read: lesen lis lire leggi leggere leia ler прочитай прочти прочесть
get: hol holen obtén obtener consigue trae récupère récupérer obtiens prendi recupera ottieni pega pegue
  obtém haal получи достань
  donne donne-moi dámelo dammi geef дай
delete: lösche lösch löschen entferne entfernen borra borrar elimina eliminar quita supprime supprimer
  effacer cancella cancellare rimuovi apaga apague exclui exclua remova deleta verwijder wis
  удали удалить сотри
change: ändere änder ändern cambia cambiar modifica modificar modifie muda mude altera
  altere wijzig verander измени поменяй изменить
update: aktualisiere aktualisieren actualiza actualizar aggiorna atualiza atualize обнови
rename: benenne umbenennen renombra renomme rinomina renomeia renomeie hernoem переименуй
replace: ersetze ersetzen reemplaza sustituye remplace remplacer sostituisci substitui substitua vervang замени
move: verschiebe verschieb mueve déplace déplacer sposta spostare mova verplaats перемести
send: sende schicke schick senden schicken envía envia enviar manda mandar envoie envoyer invia inviare
  envie mande stuur verstuur отправь отправить пошли
  wyślij
run: führe starte starten ejecuta ejecutar inicia exécute exécuter démarre esegui eseguire avvia
  lancia executa executar roda voer запусти выполни
remember: merk merke merken recuerda retiens mémorise ricorda ricordati memorizza lembra lembre memoriza onthoud
  запомни
click: klicke klick pulsa cliquer clicca clica klik нажми кликни
type: tippe tippen teclea saisis digita digite typ введи напечатай
copy: kopiere kopieren copia copiar copie copiare kopieer скопируй
export: exportiere exportieren exporta exportar exporte esporta exporteer экспортируй
undo: deshaz desfaz desfaça annulla отмени
cancel: annule annuler
translate: übersetze traduce traducir traduis traduire traduci traduz traduza vertaal переведи
  tradúceme traduis-moi traducimi
summarize: resumir résume résumer riassumi resuma
calculate: berechne rechne calcula calcular calcule calculer calcola bereken посчитай вычисли
compare: vergleiche compara comparar comparer confronta vergelijk сравни
unzip: entpacke descomprime décompresse decomprimi descompacta descompacte распакуй
compress: komprimiere comprime compresse comprimi compacta сожми
zip: zippe заархивируй
convert: konvertiere konvertieren convierte conviérteme convertir convertis convertis-moi converti convertire converta
  converter converteer конвертируй преобразуй
pause: pausiere pausa pausar pauzeer приостанови
publish: veröffentliche veröffentlichen publica publicar publie publier pubblica pubblicare publique publiceer
  опубликуй
put: pon ponme mets metti coloca coloque поставь
set: setze setz stelle stell configura imposta définis règle stel установи
see: sieh ver voir vedere zien посмотри
resize: skaliere redimensiona redimensionne ridimensiona
tell: dis-moi dimmi diga diz-me zeg скажи
extract: extrahiere extrae extraire estrai extrai
explain: erkläre erklär erklären erklaere explique explique-moi expliquer explícame explicame explícanos explicar
  spiega spiegami spiegaci spiegare explica explica-me verklaar объясни
"""

# English verb: its forms in zh, ja, ko (substrings; "_" stands for a space inside a form).
_MARKS = """
create: 创建 新建 建一个 作成 作って 作る 만들어 생성
add: 添加 增加 加一 追加 入れて 추가
write: 写入 書いて 書き込 작성
save: 保存 저장
show: 显示 展示 看看 查看 見せて 表示 보여
list: 列出 列一下 一覧 목록
find: 查找 找到 找出 找一下 探して 찾아
search: 搜索 搜一下 查一下 検索 調べて 검색
open: 打开 開いて 開け 열어
read: 读取 读一下 読んで 読み込 읽어
get: 获取 取得 가져와
delete: 删除 删掉 削除 消して 삭제 지워
change: 修改 更改 改成 変更 변경 바꿔 수정
update: 更新 업데이트
rename: 重命名 名前を変 이름을_바꿔
replace: 替换 置換 置き換 교체
move: 移动 移到 移動 이동 옮겨
send: 发送 发给 发一 送って 送信 보내 전송
run: 运行 执行 启动 実行 起動 실행
remember: 记住 覚えて 覚えと 기억해
click: 点击 クリック 클릭
type: 输入 入力 입력
copy: 复制 コピー 복사
export: 导出 エクスポート 내보내
undo: 撤回 撤销 元に戻 되돌려
translate: 翻译 翻訳 번역
summarize: 总结 概括 要約 요약
calculate: 计算 計算 계산
compare: 比较 对比 比較 비교
unzip: 解压 解凍 압축을_풀
compress: 压缩 圧縮 압축해
resize: 缩放 リサイズ 크기를_조정 크기_조정
"""


def _table(text: str) -> dict[str, str]:
    """Form -> English verb, from lines "verb: form form …" (a line may go on indented; "_" in a form
    is a space)."""
    out: dict[str, str] = {}
    for line in re.sub(r"\n\s+", " ", text.strip()).splitlines():
        verb, forms = line.split(":", 1)
        for form in forms.split():
            out.setdefault(form.replace("_", " "), verb)
    return out


_WORD_VERBS = _table(_WORDS)
_MARK_VERBS = _table(_MARKS)
_MARKS_RE = re.compile("|".join(sorted(map(re.escape, _MARK_VERBS), key=len, reverse=True)))
_TOKEN = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)?", re.UNICODE)
# Words of politeness, address and wanting a request may start with before its verb.
_POLITE = frozenset("""
bitte mal doch kannst könntest du mir uns por favor puedes podrías me nos s il te plaît vous pouvez peux tu
moi per piacere puoi potresti mi ci você pode podes pode-me kun je alsjeblieft graag пожалуйста можешь
мне нам quiero quisiera möchte ich voglio vorrei je veux quero queria wil хочу
""".split())
_LEAD_WORDS = 4  # the verb must come within this many words past politeness


def foreign_verb(text: str) -> str | None:
    """The English verb a request in another language leads with (:data:`_WORDS`) or, in Chinese,
    Japanese or Korean, the one verb of :data:`_MARKS` it names; None when it names none (or two
    different ones in those scripts)."""
    marks = {_MARK_VERBS[m] for m in _MARKS_RE.findall(text)}
    if marks:
        return marks.pop() if len(marks) == 1 else None
    words = [w for w in (m.lower() for m in _TOKEN.findall(text)) if w not in _POLITE]
    at = next((i for i, w in enumerate(words[:_LEAD_WORDS]) if w in _WORD_VERBS), None)
    if at is None:
        return None
    verb = _WORD_VERBS[words[at]]
    return "create" if verb == "open" and opens_new(words[at + 1:]) else verb
