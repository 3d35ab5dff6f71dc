#include "answer/kb/kb_bitext.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "answer/generate/postprocess.h"
#include "answer/kb/kb_company.h"
#include "answer/kb/kb_csv.h"
#include "answer/kb/kb_lint.h"

namespace hotline::answer {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

constexpr std::string_view kAnonymized = " Anonymized";

// Words that make a sentence about one customer or about the agent itself, not a general answer.
bool PersonalOrAgentVoice(std::string_view sentence) {
  static const std::set<std::string> kWords = {
      "i", "i'm", "i'll", "i've", "i'd", "me", "my", "mr", "ms", "mrs", "they", "they're",
      "they'll", "them", "these", "gold", "premium", "freemium", "platinum", "standard", "pro",
      "toronto", "free"};
  std::string word;
  for (size_t i = 0; i <= sentence.size(); ++i) {
    const char ch = i < sentence.size() ? sentence[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '\'') {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    } else {
      if (kWords.count(word)) return true;
      word.clear();
    }
  }
  for (char ch : sentence) {
    if (std::isdigit(static_cast<unsigned char>(ch))) return true;  // order numbers, amounts
  }
  return false;
}

// Tidies what filling placeholders would leave: "our {{website}}" would read "our example dot
// com", "our {{live_chat}} on the website" "our the live chat on our website on the website".
std::string Tidy(std::string s) {
  for (auto [from, to] : {std::pair<std::string_view, std::string_view>{
                              "your {{website}} account", "your account on {{website}}"},
                          {"{{live_chat}} feature on our website", "{{live_chat}}"},
                          {"{{live_chat}} feature on the website", "{{live_chat}}"},
                          {"{{live_chat}} on our website", "{{live_chat}}"},
                          {"{{live_chat}} on the website", "{{live_chat}}"},
                          {"our {{live_chat}}", "{{live_chat}}"},
                          {"the {{live_chat}}", "{{live_chat}}"},
                          {"{{website}} website", "{{website}}"},
                          {"{{website}} login page", "the login page of {{website}}"},
                          {"our {{website}}", "{{website}}"},
                          {"the {{website}}", "{{website}}"},
                          {"your {{website}}", "{{website}}"},
                          {"our our ", "our "},
                          {"your our ", "our "},
                          {"the our ", "our "},
                          {"your your ", "your "},
                          {"the your ", "your "},
                          {"the the ", "the "},
                          {"{{live_chat}} feature", "{{live_chat}}"},
                          {"  ", " "}}) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
      s.replace(p, from.size(), to);
    }
  }
  return s;
}

const std::set<std::string>& StopWords() {
  static const std::set<std::string> k = {
      "the", "a", "an", "to", "of", "and", "or", "in", "on", "for", "your", "you", "our", "we",
      "is", "are", "be", "it", "this", "that", "with", "can", "will", "at", "by", "as", "if",
      "any", "from", "please", "my", "me", "i", "us", "have", "has", "do", "so", "all", "not"};
  return k;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// Replaces each {{Placeholder}} with fn(placeholder).
template <class Fn>
std::string MapPlaceholders(std::string_view s, Fn fn) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    size_t open = s.find("{{", pos);
    if (open == std::string_view::npos) break;
    size_t close = s.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(s.substr(pos, open - pos));
    out.append(fn(s.substr(open + 2, close - open - 2)));
    pos = close + 2;
  }
  out.append(s.substr(pos));
  return out;
}

// Splits one line into sentences at '.', '!' or '?' followed by a space.
std::vector<std::string> LineSentences(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const bool end =
        (c == '.' || c == '!' || c == '?') && (i + 1 == line.size() || line[i + 1] == ' ');
    if (!end && i + 1 != line.size()) continue;
    std::string_view sentence = Trim(line.substr(start, i + 1 - start));
    start = i + 1;
    if (!sentence.empty()) out.emplace_back(sentence);
  }
  return out;
}

// A response as numbered (or bulleted) steps and the other sentences, placeholders as written.
struct ParsedResponse {
  std::vector<std::string> steps;      // each step's first sentence, list marker removed
  std::vector<std::string> sentences;  // sentences outside the list
};

// "**Log In**: Start by logging in." -> "Start by logging in."; "Firstly, open X." -> "Open X."
std::string CleanStep(std::string_view line) {
  std::string s;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line.compare(i, 2, "**") == 0) {
      ++i;
      continue;
    }
    s.push_back(line[i]);
  }
  std::string_view v = Trim(s);
  if (const size_t colon = v.find(':');
      colon != std::string_view::npos && colon < 40 && Words(v.substr(0, colon)).size() <= 5) {
    v = Trim(v.substr(colon + 1));
  }
  const std::vector<std::string> sentences = LineSentences(v);
  std::string first = sentences.empty() ? std::string() : sentences[0];
  for (std::string_view lead :
       {"Firstly, ", "First, ", "Secondly, ", "Second, ", "Next, ", "Then, ", "Finally, ",
        "Lastly, ", "Additionally, ", "Afterward, ", "Afterwards, "}) {
    if (StartsWith(first, lead)) first = first.substr(lead.size());
  }
  if (first.size() > 1 && std::islower(static_cast<unsigned char>(first[0]))) {
    first[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(first[0])));
  }
  return first;
}

ParsedResponse ParseResponse(std::string_view response) {
  ParsedResponse out;
  size_t pos = 0;
  while (pos <= response.size()) {
    size_t nl = response.find('\n', pos);
    if (nl == std::string_view::npos) nl = response.size();
    std::string_view line = Trim(response.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty()) continue;
    size_t d = 0;
    while (d < line.size() && std::isdigit(static_cast<unsigned char>(line[d]))) ++d;
    if (d > 0 && d < 3 && d + 1 < line.size() && (line[d] == '.' || line[d] == ')')) {
      out.steps.push_back(CleanStep(line.substr(d + 1)));
      continue;
    }
    if (line[0] == '-' || line[0] == '*' || StartsWith(line, "\xe2\x80\xa2")) {
      const size_t skip = line[0] == '-' || line[0] == '*' ? 1 : 3;
      out.steps.push_back(CleanStep(line.substr(skip)));
      continue;
    }
    for (std::string& s : LineSentences(line)) out.sentences.push_back(std::move(s));
  }
  return out;
}

std::string Humanize(std::string_view intent) {
  std::string out(intent);
  for (char& c : out) c = c == '_' ? ' ' : c;
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string CsvField(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\"\"";
    else out.push_back(c);
  }
  return out + "\"";
}

struct Candidate {
  std::string text;  // spoken form, company facts as {{key}}, slots as "your order number"
  size_t response = 0;
  double score = 0;
};

// What a caller wants to do, as the opening of an instruction ("To cancel an order, ...").
std::string Purpose(const std::string& intent) {
  static const std::map<std::string, std::string> k = {
      {"cancel_order", "To cancel an order"},
      {"change_order", "To change an order"},
      {"change_shipping_address", "To change your delivery address"},
      {"check_cancellation_fee", "To see the cancellation fee"},
      {"check_invoice", "To see an invoice"},
      {"check_payment_methods", "To see the payment methods we accept"},
      {"check_refund_policy", "To read our refund policy"},
      {"complaint", "To make a complaint"},
      {"contact_customer_service", "To reach customer service"},
      {"contact_human_agent", "To speak to an agent"},
      {"create_account", "To create an account"},
      {"delete_account", "To close your account"},
      {"delivery_options", "To see the delivery options"},
      {"delivery_period", "To see when your order arrives"},
      {"edit_account", "To change your account details"},
      {"get_invoice", "To get an invoice"},
      {"get_refund", "To ask for a refund"},
      {"newsletter_subscription", "To manage your newsletter subscription"},
      {"payment_issue", "To report a payment problem"},
      {"place_order", "To place an order"},
      {"recover_password", "To reset your password"},
      {"registration_problems", "For help signing up"},
      {"review", "To leave a review"},
      {"set_up_shipping_address", "To add a delivery address"},
      {"switch_account", "To switch accounts"},
      {"track_order", "To track your order"},
      {"track_refund", "To track your refund"},
  };
  if (auto it = k.find(intent); it != k.end()) return it->second;
  return "To " + Lower(Humanize(intent));
}

// The company fact an intent's answer starts with (filled from the company: section at load),
// where the corpus itself only says "visit our website": how long, until when, which number.
std::string CompanyFact(const std::string& intent) {
  static const std::map<std::string, std::string> k = {
      {"delivery_period",
       "Standard delivery takes {{delivery_time}}, and express delivery "
       "{{express_delivery_time}}."},
      {"delivery_options",
       "We deliver by standard delivery in {{delivery_time}} or express delivery in "
       "{{express_delivery_time}}."},
      {"check_refund_policy",
       "You can ask for a refund within {{refund_window}} of delivery, and an approved refund "
       "reaches you within {{refund_time}}."},
      {"get_refund", "You can ask for a refund within {{refund_window}} of delivery."},
      {"track_refund", "An approved refund reaches you within {{refund_time}}."},
      {"cancel_order", "You can cancel an order {{cancellation_window}}."},
      {"contact_customer_service", "You can call us on {{phone}}, {{hours}}."},
      {"contact_human_agent", "Our agents answer on {{phone}}, {{hours}}."},
  };
  if (auto it = k.find(intent); it != k.end()) return it->second;
  return "";
}

// "Log in to X." -> "log in to X." for use after "To cancel an order, "; "I..." and acronyms
// keep their capital.
std::string LowerFirst(std::string s) {
  if (s.size() > 1 && std::isupper(static_cast<unsigned char>(s[0])) &&
      std::islower(static_cast<unsigned char>(s[1]))) {
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  }
  return s;
}

}  // namespace

std::string PlaceholderSlot(std::string_view placeholder) {
  std::string_view p = Trim(placeholder);
  if (p.size() > kAnonymized.size() && p.substr(p.size() - kAnonymized.size()) == kAnonymized) {
    p.remove_suffix(kAnonymized.size());
  }
  std::string out;
  for (char c : p) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "value" : out;
}

std::string PlaceholderSpoken(std::string_view placeholder) {
  if (const std::string key = CompanyKeyOf(placeholder); !key.empty()) return "{{" + key + "}}";
  std::string_view p = Trim(placeholder);
  if (p.size() > kAnonymized.size() && p.substr(p.size() - kAnonymized.size()) == kAnonymized) {
    p.remove_suffix(kAnonymized.size());
    return "your " + Lower(p);
  }
  if (Lower(p) == "number of days") return "a few days";
  return std::string(p);  // a screen or button name: said as written
}

namespace {

// One candidate sentence (placeholders as written in the corpus) in its spoken form, or "" when
// it is not something to say: not a plain statement, about one customer or the agent, a stock
// phrase, built around a placeholder the corpus never fills, or no instruction at all.
std::string SpeakableInstruction(std::string_view sentence) {
  sentence = Trim(sentence);
  if (sentence.size() < 15 || sentence.back() != '.') return "";
  if (sentence.find('"') != std::string_view::npos ||
      sentence.find('[') != std::string_view::npos ||
      sentence.find(':') != std::string_view::npos ||
      sentence.find('(') != std::string_view::npos) {
    return "";
  }
  bool content_placeholder = false;
  MapPlaceholders(sentence, [&](std::string_view p) {
    if (CompanyKeyOf(p).empty() && Words(p).size() >= 3 &&
        p.find("Anonymized") == std::string_view::npos) {
      content_placeholder = true;
    }
    return std::string();
  });
  if (content_placeholder) return "";
  if (PersonalOrAgentVoice(
          MapPlaceholders(sentence, [](std::string_view) { return std::string("x"); }))) {
    return "";
  }
  std::string spoken = Tidy(MapPlaceholders(sentence, PlaceholderSpoken));
  if (IsStockPhrase(spoken) || !TellsWhatToDo(spoken)) return "";
  if (spoken.find("{{") == std::string::npos && spoken.find('{') != std::string::npos) return "";
  return spoken;
}

}  // namespace

namespace {

// One intent's rows of the corpus: its responses, and its example questions without their entity
// values.
struct IntentData {
  std::vector<std::string> responses;
  std::vector<std::string> questions;
};

Result<std::map<std::string, IntentData>> ReadIntents(std::string_view csv_text) {
  CsvReader reader(csv_text);
  CsvRecord rec;
  ASSIGN_OR_RETURN(bool has_header, reader.Next(rec));
  if (!has_header) return InvalidArgumentError("Bitext corpus is empty");
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < rec.fields.size(); ++i) col[rec.fields[i]] = i;
  for (const char* need : {"instruction", "intent", "response", "entity_value"}) {
    if (!col.count(need)) {
      return InvalidArgumentError(std::string("Bitext corpus lacks the column '") + need + "'");
    }
  }
  std::map<std::string, IntentData> intents;
  for (;;) {
    ASSIGN_OR_RETURN(bool more, reader.Next(rec));
    if (!more) break;
    if (rec.fields.size() != col.size()) {
      return InvalidArgumentError("Bitext corpus line " + std::to_string(rec.line) + ": has " +
                                  std::to_string(rec.fields.size()) + " fields");
    }
    IntentData& d = intents[rec.fields[col["intent"]]];
    d.responses.push_back(rec.fields[col["response"]]);
    // Example questions carry no entity values (order numbers, names): the value is cut out of
    // an utterance that has one ("can i edit order 7322" -> "can i edit order").
    std::string question = rec.fields[col["instruction"]];
    const std::string& value = rec.fields[col["entity_value"]];
    if (!value.empty()) {
      const size_t at = question.find(value);
      if (at == std::string::npos) continue;
      question.erase(at, value.size());
      std::string collapsed;
      for (char c : question) {
        if (c == ' ' && (collapsed.empty() || collapsed.back() == ' ')) continue;
        collapsed.push_back(c);
      }
      question = std::string(Trim(collapsed));
    }
    if (!question.empty()) d.questions.push_back(std::move(question));
  }
  return intents;
}

// Words of the first sentence, the company facts counted as the demo defaults say them
// ("1 800 555 0100").
int FirstSentenceWords(const std::string& text) {
  auto filled = FillCompanyPlaceholders(text, CompanyConfig{});
  return WordCount(SplitSentences(filled.ok() ? *filled : text)[0]);
}

// The intent's speakable instructions, best first: each sentence a response gives, and the first
// two steps of a list after what they are for; scored by how typical their words are of the
// intent's responses, with bonuses for naming the intent, a company fact, and being short.
std::vector<Candidate> RankCandidates(const std::string& intent, const IntentData& d,
                                      const BitextDeriveOptions& options) {
  // Document frequency of words over the intent's responses: a typical instruction is one
  // many responses give.
  std::map<std::string, int> df;
  for (const auto& r : d.responses) {
    std::set<std::string> seen;
    for (auto& w : Words(MapPlaceholders(r, [](std::string_view) { return std::string(); }))) {
      if (!StopWords().count(w)) seen.insert(w);
    }
    for (const auto& w : seen) ++df[w];
  }
  auto typicality = [&](const std::string& spoken) {
    double sum = 0;
    int n = 0;
    for (auto& w : Words(MapPlaceholders(spoken, [](std::string_view) { return std::string(); }))) {
      if (StopWords().count(w)) continue;
      sum += static_cast<double>(df[w]) / static_cast<double>(d.responses.size());
      ++n;
    }
    return n < 3 ? -1.0 : sum / n;
  };
  const std::vector<std::string> intent_words = Words(Humanize(intent));
  const std::string purpose = Purpose(intent);
  std::vector<Candidate> candidates;
  auto consider = [&](std::string spoken, size_t response, double bonus) {
    if (FirstSentenceWords(spoken) > kMaxFirstSentenceWords) return;
    if (spoken.size() > static_cast<size_t>(options.max_answer_chars)) return;
    const double typical = typicality(spoken);
    if (typical < 0) return;
    std::set<std::string> words;
    for (auto& w : Words(spoken)) words.insert(w);
    for (const auto& w : intent_words) bonus += words.count(w) ? 0.3 : 0.0;
    if (spoken.find("{{") != std::string::npos) bonus += 0.2;  // names the number, the site
    bonus -= 0.005 * WordCount(spoken);                        // shorter is easier to follow
    candidates.push_back(Candidate{std::move(spoken), response, typical + bonus});
  };
  for (size_t ri = 0; ri < d.responses.size(); ++ri) {
    const ParsedResponse parsed = ParseResponse(d.responses[ri]);
    for (const std::string& sentence : parsed.sentences) {
      std::string spoken = SpeakableInstruction(sentence);
      if (!spoken.empty()) consider(std::move(spoken), ri, 0.0);
    }
    // The first two steps of a list, after what they are for: "To cancel an order, log in to
    // {{website}}. Then open Order History and press Cancel Order."
    if (parsed.steps.size() >= 2) {
      std::vector<std::string> steps;
      for (size_t i = 0; i < parsed.steps.size() && i < 2; ++i) {
        steps.push_back(SpeakableInstruction(parsed.steps[i]));
      }
      if (!steps[0].empty()) {
        std::string first =
            StartsWith(steps[0], "To ") ? steps[0] : purpose + ", " + LowerFirst(steps[0]);
        if (!steps[1].empty() && !StartsWith(steps[1], "To ")) {
          consider(first + " Then " + LowerFirst(steps[1]), ri, 0.3);
        }
        consider(first, ri, 0.2);
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return candidates;
}

// Bodies: the intent's company fact (when it has one) and the best instructions, at most two
// sentences; each article from a different response. An intent the corpus gives no instruction
// for still tells the caller where to go.
std::vector<std::string> ChooseBodies(const std::string& intent,
                                      const std::vector<Candidate>& candidates,
                                      const BitextDeriveOptions& options) {
  const std::string fact = CompanyFact(intent);
  std::vector<std::string> bodies;
  std::set<size_t> used_responses;
  std::set<std::string> used_texts;
  for (const auto& c : candidates) {
    if (static_cast<int>(bodies.size()) >= options.articles_per_intent) break;
    if (used_responses.count(c.response) || used_texts.count(c.text)) continue;
    std::string body = c.text;
    if (!fact.empty()) body = fact + " " + SplitSentences(c.text)[0];
    if (body.size() > static_cast<size_t>(options.max_answer_chars) ||
        FirstSentenceWords(body) > kMaxFirstSentenceWords) {
      continue;
    }
    used_responses.insert(c.response);
    used_texts.insert(c.text);
    bodies.push_back(std::move(body));
  }
  if (bodies.empty()) {
    bodies.push_back(fact.empty() ? Purpose(intent) + ", call us on {{phone}}, {{hours}}." : fact);
  }
  return bodies;
}

// The intent's articles, one per body. Example questions: evenly spaced through the intent's
// utterances sorted by length, so short and long phrasings are both represented; article k takes
// its own slice.
void AddArticles(const std::string& intent, const IntentData& d, std::vector<std::string> bodies,
                 const BitextDeriveOptions& options, std::vector<Article>& articles) {
  std::vector<std::string> qs = d.questions;
  std::sort(qs.begin(), qs.end(), [](const std::string& x, const std::string& y) {
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  qs.erase(std::unique(qs.begin(), qs.end()), qs.end());
  std::vector<std::string> extra;
  if (auto it = options.extra_questions.find(intent); it != options.extra_questions.end()) {
    for (const std::string& q : it->second) {
      // One question per list entry: the separator and line breaks become spaces.
      std::string clean(Trim(q));
      std::replace_if(
          clean.begin(), clean.end(), [](char c) { return c == '|' || c == '\n' || c == '\r'; },
          ' ');
      if (!clean.empty() && std::find(qs.begin(), qs.end(), clean) == qs.end() &&
          std::find(extra.begin(), extra.end(), clean) == extra.end()) {
        extra.push_back(std::move(clean));
      }
    }
  }
  int made = 0;
  for (std::string& body : bodies) {
    ++made;
    Article a;
    a.id = intent + "-" + std::to_string(made);
    a.title = Humanize(intent);
    a.intent = intent;
    a.body = std::move(body);
    const int want = options.questions_per_article;
    for (int i = 0; i < want && !qs.empty(); ++i) {
      const size_t idx =
          (static_cast<size_t>(i * options.articles_per_intent + made - 1) * qs.size()) /
          static_cast<size_t>(want * options.articles_per_intent);
      if (!a.questions.empty()) a.questions += "|";
      a.questions += std::string(Trim(qs[std::min(idx, qs.size() - 1)]));
    }
    // Extra questions: every articles_per_intent-th one, from the article's own offset, so that
    // no two articles share one; up to extra_questions_per_article each.
    int taken = 0;
    for (size_t j = static_cast<size_t>(made - 1);
         j < extra.size() && taken < options.extra_questions_per_article;
         j += static_cast<size_t>(std::max(1, options.articles_per_intent)), ++taken) {
      if (!a.questions.empty()) a.questions += "|";
      a.questions += extra[j];
    }
    articles.push_back(std::move(a));
  }
}

}  // namespace

Result<std::vector<Article>> DeriveBitextArticles(std::string_view csv_text,
                                                  const BitextDeriveOptions& options) {
  ASSIGN_OR_RETURN(auto intents, ReadIntents(csv_text));
  std::vector<Article> articles;
  for (const auto& [intent, d] : intents) {
    const std::vector<Candidate> candidates = RankCandidates(intent, d, options);
    AddArticles(intent, d, ChooseBodies(intent, candidates, options), options, articles);
  }
  return articles;
}

bool AddClincQuestion(std::string_view clinc_intent, std::string_view question,
                      BitextDeriveOptions& options) {
  // CLINC150 intent -> the Bitext intent whose articles answer it.
  static constexpr std::pair<std::string_view, std::string_view> kAsks[] = {
      {"order_status", "track_order"}};
  for (const auto& [clinc, bitext] : kAsks) {
    if (clinc == clinc_intent) {
      options.extra_questions[std::string(bitext)].emplace_back(question);
      return true;
    }
  }
  return false;
}

std::string ArticlesToCsv(const std::vector<Article>& articles) {
  std::string out = "id,title,intent,body,template,questions\n";
  for (const auto& a : articles) {
    out += CsvField(a.id) + "," + CsvField(a.title) + "," + CsvField(a.intent) + "," +
           CsvField(a.body) + "," + CsvField(a.answer_template) + "," + CsvField(a.questions) + "\n";
  }
  return out;
}

}  // namespace hotline::answer
