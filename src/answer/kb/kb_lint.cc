#include "answer/kb/kb_lint.h"

#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "answer/cache/intent_cache.h"
#include "answer/generate/postprocess.h"
#include "answer/kb/kb_csv.h"
#include "answer/understand/entities.h"
#include "common/utf8.h"

namespace hotline::answer {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> LowerWords(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '\'') {
      cur.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// Verbs (and their usual forms) that ask the caller to do something.
const std::set<std::string>& ActionWords() {
  static const std::set<std::string> k = {
      "visit",     "go",       "log",       "login",     "logging",     "sign",    "signing",
      "click",     "tap",      "press",     "open",      "select",      "choose",  "navigate",
      "call",      "contact",  "reach",     "email",     "enter",       "fill",    "use",
      "send",      "reply",    "follow",    "look",      "find",        "submit",  "type",
      "download",  "print",    "request",   "return",    "arrive",      "arrives", "takes",
      "take",      "receive",  "expect",    "subscribe", "unsubscribe", "create",  "delete",
      "edit",      "add",      "remove",    "track",     "ask",         "write",   "leave",
      "cancel",    "change",   "update",    "check",     "pay",         "choose",  "opt",
      "ships",     "ship",     "reaches",   "reach",     "speak",       "talk",    "dial",
      "available", "refunded", "delivered", "processed", "sent",        "accept",  "accepts"};
  return k;
}

// Where to act: places, channels, screens.
const std::set<std::string>& WhereWords() {
  static const std::set<std::string> k = {
      "website", "site",  "app",      "page",    "section",  "tab",    "menu",      "button",
      "link",    "form",  "settings", "account", "profile",  "chat",   "phone",     "line",
      "email",   "inbox", "portal",   "history", "checkout", "cart",   "dashboard", "number",
      "agent",   "store", "option",   "options", "field",    "basket", "card",      "paypal"};
  return k;
}

// How long: a duration unit after a number.
const std::set<std::string>& DurationWords() {
  static const std::set<std::string> k = {"day",   "days",   "hour",    "hours", "week",
                                          "weeks", "minute", "minutes", "month", "months"};
  return k;
}

bool IsNumberWord(const std::string& w) {
  static const std::set<std::string> k = {"one",      "two",    "three", "four", "five",
                                          "six",      "seven",  "eight", "nine", "ten",
                                          "fourteen", "thirty", "a",     "few"};
  if (k.count(w)) return true;
  for (char c : w) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return !w.empty();
}

const std::vector<std::string_view>& StockPhrases() {
  static const std::vector<std::string_view> k = {"i understand",
                                                  "i'm here",
                                                  "i am here",
                                                  "thank you",
                                                  "thanks",
                                                  "we appreciate",
                                                  "i apologize",
                                                  "i'm sorry",
                                                  "i am sorry",
                                                  "we apologize",
                                                  "we're sorry",
                                                  "certainly",
                                                  "of course",
                                                  "absolutely",
                                                  "rest assured",
                                                  "i'm glad",
                                                  "i'm delighted",
                                                  "great",
                                                  "no worries",
                                                  "no problem",
                                                  "sure",
                                                  "let me",
                                                  "allow me",
                                                  "i'd be",
                                                  "i would be",
                                                  "i hope",
                                                  "if you have any",
                                                  "should you have",
                                                  "feel free",
                                                  "we value",
                                                  "your feedback",
                                                  "i completely",
                                                  "happy to",
                                                  "we're here",
                                                  "we are here",
                                                  "please let me know",
                                                  "is there anything",
                                                  "you are not alone",
                                                  "you're not alone",
                                                  "we understand",
                                                  "we are committed",
                                                  "we're committed",
                                                  "our team is here",
                                                  "our team is available",
                                                  "our team will",
                                                  "our support team is",
                                                  "our support team will",
                                                  "our customer support team is",
                                                  "our dedicated",
                                                  "our knowledgeable",
                                                  "our records",
                                                  "our system will",
                                                  "we'll work together",
                                                  "we will work together",
                                                  "hello",
                                                  "hi ",
                                                  "welcome",
                                                  "oh no",
                                                  "wow",
                                                  "please don't hesitate",
                                                  "don't hesitate",
                                                  "we're thrilled",
                                                  "we're delighted",
                                                  "it's important",
                                                  "not to worry",
                                                  "updating your",
                                                  "we offer seamless"};
  return k;
}

// Inline markup and symbols; returns {kind, what} of the first found.
bool FindMarkup(std::string_view text, std::string& what) {
  static const std::vector<std::string_view> k = {"**",  "__",  "`",  "](",  "<b>",    "<i>",
                                                  "<br", "<p>", "</", "<a ", "&nbsp;", "&amp;"};
  for (auto m : k) {
    if (text.find(m) != std::string_view::npos) {
      what = std::string(m);
      return true;
    }
  }
  if (text.find('\n') != std::string_view::npos) {
    what = "a line break";
    return true;
  }
  for (const std::string& sentence : SplitSentences(text)) {
    if (sentence.size() >= 2 &&
        (sentence[0] == '#' ||
         ((sentence[0] == '-' || sentence[0] == '*') && sentence[1] == ' '))) {
      what = "a heading or list marker";
      return true;
    }
    size_t d = 0;
    while (d < sentence.size() && std::isdigit(static_cast<unsigned char>(sentence[d]))) ++d;
    if (d > 0 && d + 1 == sentence.size() && (sentence[d] == '.' || sentence[d] == ')')) {
      what = "a numbered list marker";
      return true;
    }
  }
  return false;
}

bool FindUnspeakable(std::string_view text, std::string& what) {
  const std::string low = Lower(text);
  for (std::string_view m : {"http://", "https://", "www.", "e.g.", "i.e.", "etc."}) {
    if (low.find(m) != std::string::npos) {
      what = std::string(m);
      return true;
    }
  }
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\n') {  // line breaks are markup
      what = "a control character";
      return true;
    }
    if (c >= 0x20 && std::strchr("|\\^~*#<>=_@", c) != nullptr) {
      what = std::string("'") + static_cast<char>(c) + "'";
      return true;
    }
    if (c >= 0xF0) {  // 4-byte UTF-8: emoji and other symbols outside the basic plane
      what = "an emoji or symbol";
      return true;
    }
    if (c == 0xE2 && i + 1 < text.size()) {
      const unsigned char c1 = static_cast<unsigned char>(text[i + 1]);
      // U+2190..U+2BFF arrows, maths, technical, boxes, dingbats (not U+2018.. quotes, U+2013
      // dashes or U+2026 ellipsis, which are E2 80 xx).
      if (c1 >= 0x86 && c1 <= 0xAF) {
        what = "a symbol character";
        return true;
      }
    }
  }
  return false;
}

bool IsEntitySlotName(std::string_view slot) {
  for (EntityType t : {EntityType::kMonth, EntityType::kDate, EntityType::kAmount,
                       EntityType::kOrderNumber, EntityType::kAccountNumber, EntityType::kNumber}) {
    if (EntityTypeName(t) == slot) return true;
  }
  return false;
}

}  // namespace

std::string_view LintKindName(LintKind kind) {
  switch (kind) {
    case LintKind::kPlaceholder:
      return "placeholder";
    case LintKind::kFiller:
      return "filler";
    case LintKind::kLongSentence:
      return "long-sentence";
    case LintKind::kMarkup:
      return "markup";
    case LintKind::kUnspeakable:
      return "unspeakable";
  }
  return "unknown";
}

// Words of a sentence; in Chinese, two characters make about one word (as the speech chunker
// counts them), so the breath limit is the same length of speech.
int WordCount(std::string_view text) {
  return static_cast<int>(LowerWords(text).size() + (CountHan(text) + 1) / 2);
}

bool IsStockPhrase(std::string_view sentence) {
  size_t start = 0;
  while (start < sentence.size() && !std::isalnum(static_cast<unsigned char>(sentence[start]))) {
    ++start;
  }
  const std::string low = Lower(sentence.substr(start));
  for (std::string_view p : StockPhrases()) {
    if (low.compare(0, p.size(), p) == 0) return true;
  }
  return false;
}

bool Contains(std::string_view s, std::initializer_list<std::string_view> any) {
  for (std::string_view w : any) {
    if (s.find(w) != std::string_view::npos) return true;
  }
  return false;
}

// The same test for a Chinese sentence, by its cue words: an action (请, 拨打, 登录, 办理, ...)
// with where (应用, 网站, 营业厅, a company fact, ...), or how long (五分钟, 二十四小时内, 立即).
bool ChineseTellsWhatToDo(std::string_view sentence) {
  const bool action = Contains(sentence, {"请", "拨打", "登录", "打开", "选择", "申请", "开通", "充值",
                                          "重启", "带", "办理", "说", "查看", "加购", "联系", "关闭",
                                          "挂失", "登记", "支持", "告诉您"});
  const bool where = HasDoubleBracePlaceholder(sentence) ||
                     Contains(sentence, {"应用", "网站", "页面", "营业厅", "邮箱", "电话", "账户",
                                         "首页", "身份证"});
  bool duration = Contains(sentence, {"立即", "立刻", "马上", "当场"});
  static constexpr std::string_view kUnits[] = {"分钟", "小时", "天", "工作日", "周", "个月"};
  static constexpr std::string_view kNumerals = "一二三四五六七八九十两几0123456789";
  for (std::string_view unit : kUnits) {
    for (size_t at = sentence.find(unit); at != std::string_view::npos && !duration;
         at = sentence.find(unit, at + 1)) {
      // The character before the unit (skipping 个) is a numeral: "五分钟", "三个工作日".
      std::string_view before = sentence.substr(0, at);
      if (before.ends_with("个")) before.remove_suffix(std::string_view("个").size());
      if (before.empty()) continue;
      const size_t n = (static_cast<unsigned char>(before.back()) < 0x80) ? 1 : 3;
      if (before.size() >= n && kNumerals.find(before.substr(before.size() - n)) != std::string_view::npos) {
        duration = true;
      }
    }
  }
  return duration || (action && where);
}

bool TellsWhatToDo(std::string_view sentence) {
  if (ContainsHan(sentence)) return ChineseTellsWhatToDo(sentence);
  const bool company_fact = HasDoubleBracePlaceholder(sentence);
  const std::vector<std::string> words = LowerWords(sentence);
  bool action = false, where = company_fact, duration = false;
  for (size_t i = 0; i < words.size(); ++i) {
    action = action || ActionWords().count(words[i]) > 0;
    where = where || WhereWords().count(words[i]) > 0;
    // "3 days", "5 to 10 working days", "two business days".
    if (DurationWords().count(words[i])) {
      for (size_t back = 1; back <= 2 && back <= i; ++back) {
        if (IsNumberWord(words[i - back])) duration = true;
      }
    }
    if (words[i] == "dot" && i + 1 < words.size() && words[i + 1] == "com") where = true;
  }
  return duration || (action && where);
}

std::vector<LintIssue> LintArticleText(std::string_view id, std::string_view body,
                                       std::string_view answer_template,
                                       const CompanyConfig& company) {
  std::vector<LintIssue> out;
  auto issue = [&](LintKind kind, std::string message) {
    out.push_back(LintIssue{0, std::string(id), kind, std::move(message)});
  };
  // Placeholders, on the text as written.
  auto spoken = FillCompanyPlaceholders(body, company);
  if (!spoken.ok()) {
    issue(LintKind::kPlaceholder, "body: " + spoken.status().message());
  }
  const std::string text = spoken.ok() ? *spoken : std::string(body);
  if (spoken.ok()) {
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '{' && text[i] != '[') continue;
      const char close = text[i] == '{' ? '}' : ']';
      const size_t end = text.find(close, i + 1);
      if (end != std::string::npos && end - i <= 64) {
        issue(LintKind::kPlaceholder,
              "body holds the unfilled slot " + text.substr(i, end - i + 1) +
                  "; write it out, or put it in the template column as an entity slot");
        break;
      }
    }
  }
  if (!answer_template.empty()) {
    auto filled = FillCompanyPlaceholders(answer_template, company);
    if (!filled.ok()) {
      issue(LintKind::kPlaceholder, "template: " + filled.status().message());
    } else {
      auto slots = TemplateSlots(*filled);
      if (!slots.ok()) {
        issue(LintKind::kPlaceholder, "template: " + slots.status().message());
      } else {
        for (const std::string& s : *slots) {
          if (!IsEntitySlotName(s)) {
            issue(LintKind::kPlaceholder,
                  "template slot {" + s +
                      "} is no entity slot (month, date, amount, order_number, account_number, "
                      "number); write a company fact as {{key}}");
          }
        }
      }
    }
  }
  // What is spoken.
  const std::vector<std::string> sentences = SplitSentences(text);
  if (sentences.empty()) {
    issue(LintKind::kFiller, "body is empty");
    return out;
  }
  if (IsStockPhrase(sentences[0])) {
    issue(LintKind::kFiller, "opens with a stock phrase (\"" + sentences[0].substr(0, 40) +
                                 "...\"); start with what the caller should do");
  } else {
    // A company fact counts as where ("call us on {{phone}}"), so the text is also read as
    // written.
    bool concrete = false;
    for (const std::string& s : sentences) concrete = concrete || TellsWhatToDo(s);
    for (const std::string& s : SplitSentences(body)) concrete = concrete || TellsWhatToDo(s);
    if (!concrete) {
      issue(LintKind::kFiller,
            "no sentence tells the caller what to do (an action with where or how long)");
    }
  }
  const int words = WordCount(sentences[0]);
  if (words > kMaxFirstSentenceWords) {
    issue(LintKind::kLongSentence, "first sentence has " + std::to_string(words) +
                                       " words (at most " + std::to_string(kMaxFirstSentenceWords) +
                                       ")");
  }
  std::string what;
  if (FindMarkup(text, what)) issue(LintKind::kMarkup, "body holds markup: " + what);
  what.clear();
  if (FindUnspeakable(text, what)) {
    issue(LintKind::kUnspeakable, "body holds " + what + ", which a voice cannot say as written");
  }
  return out;
}

Result<std::vector<LintIssue>> LintKnowledgeBaseCsv(std::string_view csv_text,
                                                    const CompanyConfig& company) {
  CsvReader reader(csv_text);
  CsvRecord rec;
  ASSIGN_OR_RETURN(bool has_header, reader.Next(rec));
  if (!has_header) return InvalidArgumentError("empty file; expected a header row");
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < rec.fields.size(); ++i) col[rec.fields[i]] = i;
  for (const char* need : {"id", "body"}) {
    if (!col.count(need)) {
      return InvalidArgumentError(std::string("header lacks the column '") + need + "'");
    }
  }
  const size_t ncols = rec.fields.size();
  std::vector<LintIssue> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool more, reader.Next(rec));
    if (!more) break;
    if (rec.fields.size() == 1 && rec.fields[0].empty()) continue;
    if (rec.fields.size() != ncols) {
      return InvalidArgumentError("line " + std::to_string(rec.line) + ": has " +
                                  std::to_string(rec.fields.size()) + " fields, the header has " +
                                  std::to_string(ncols));
    }
    auto field = [&](const char* name) {
      auto it = col.find(name);
      return it == col.end() ? std::string() : rec.fields[it->second];
    };
    for (LintIssue& i : LintArticleText(field("id"), field("body"), field("template"), company)) {
      i.line = rec.line;
      out.push_back(std::move(i));
    }
  }
  return out;
}

}  // namespace hotline::answer
