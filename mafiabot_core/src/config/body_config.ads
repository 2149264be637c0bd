--  The body's command line.  Every option has a default that serves Hermes
--  as it is; a bad option refuses to start (exit 2) with a message naming it.

with Ada.Strings.Unbounded;
with Energy_Gate;

package Body_Config is

   use Ada.Strings.Unbounded;

   Version : constant String := "0.1.0";

   type Soul_Policy is
     (Keep,
      --  Write SOUL.md where it is missing, Hermes's default persona or the
      --  body's own unedited write; leave anything else, saying so
      Replace,
      --  As Keep, and replace the operator's own too, keeping it first as
      --  a timestamped backup beside it
      Off);
      --  Write nothing

   type Soul_Action is
     (Serve,
      --  Boot (writing SOUL.md as the policy says) and serve
      Show_Soul,
      --  Print one line, "STATE<TAB>sentence", saying whose SOUL.md is there
      --  and what a boot with this policy would do with it; write nothing
      Restore_Soul);
      --  Put back what the body's SOUL.md replaced, if the body's is still
      --  there unedited; print one line, "OUTCOME<TAB>sentence"

   type Text_Block_Form is
     (Full,
      --  The text block of a turn's result is the output and the whole
      --  result as JSON text: what clients that ignore structuredContent
      --  read (the MCP specification's advice), and what replays hold
      Compact);
      --  The output and the result's summary members only, on one line:
      --  what a model reads per turn when its client passes it the text
      --  block; structuredContent keeps the whole trace either way

   type State_Durability is
     (Normal,
      --  The store keeps every turn through a kill of the body (SIGKILL, a
      --  crash); a power loss may lose the last turns, never the file
      Full);
      --  Also through a power loss: an fsync per turn

   type Cognition_Kind is
     (Stub,
      --  Every pass thought by the fixture's stub cognition: replies are
      --  the same bytes on every run
      Sampling);
      --  Every pass, and the synthesis, asked of the client's own model
      --  (MCP sampling/createMessage), where the client declared it can
      --  be asked; else the stub's, said in the result's `cognition`

   type Intender_Kind is
     (Rules,
      --  The intent of every turn stated by the fixture's rules
      Model);
      --  Asked of the client's model (one more sampling request a turn),
      --  from the closed set of intents the packed schema names; the rules
      --  where its answer names none, said in the result's `cognition`.
      --  Only with --cognition sampling: the model is reached through it

   --  F1 recall (--recall): the memory organ's policy
   type Recall_Kind is
     (Fixture,
      --  The fixture's stub MoRAG: the latest earlier turn sharing a word
      --  with the input (replies are the same bytes on every run)
      Relevance);
      --  Organs.Morag.Relevance: the session's earlier turns ranked by
      --  BM25 against the input, with their turns and scores
   --  End of the F1 recall block

   Default_Sampling_Timeout_Ms : constant := 20_000;
   --  Per sampling request: under Hermes's own 30 s, so the body, not the
   --  client, decides when a pass is given up
   Default_Turn_Deadline_Ms    : constant := 50_000;
   --  Per turn, all its requests: a host agent ends a tool call after
   --  about 60 s, so a turn answers before that with what ran
   Default_Sampling_Max_Tokens : constant := 256;
   --  Per request: about the 1 KiB a thought keeps (Max_Thought_Bytes)

   --  Energy from the budget (--energy budget, docs/energy.md)

   type Energy_Source is
     (Fixture,
      --  The fixture's Drive-Box and curve: replays are the same bytes
      Budget);
      --  E is the share of the session's model budget left; the curve is
      --  derived from the calls a turn plans

   Default_Budget_Turns    : constant := 6;
   Default_Budget_Calls    : constant :=
     Default_Budget_Turns
     * (Energy_Gate.Pass_Total + Energy_Gate.Synthesis_Calls);
   --  A session's calls in a window: six full turns (54 calls; the sum is
   --  Energy_Gate.Full_Turn_Calls (False), static), what mount's sampling
   --  block lets through a minute (max_rpm 54), so one session alone never
   --  meets Hermes's rate limit
   Default_Budget_Window_S : constant := 300;
   --  Five minutes: at least Hermes's one-minute window, so no minute
   --  holds more than Default_Budget_Calls of one session; a drained
   --  session is whole again five minutes after its last full turn

   subtype Soul_Question is Soul_Action range Show_Soul .. Restore_Soul;
   --  What is answered with one line instead of serving

   type Settings is record
      Organs_Path    : Unbounded_String;
      --  Empty: the fixture shipped beside the executable
      Thresholds     : Unbounded_String;
      --  Empty: the fixture's energy curve
      Max_Line_Bytes : Positive := 4 * 1024 * 1024;
      Max_Depth      : Positive := 64;
      Max_Elements   : Positive := 1_000_000;
      Max_Sessions   : Positive := 10_000;
      Soul           : Soul_Policy := Keep;
      Soul_Task      : Soul_Action := Serve;
      Hermes_Home    : Unbounded_String;
      --  Empty: $HERMES_HOME, else $HOME/.hermes
      Text_Block     : Text_Block_Form := Full;
      State_Path     : Unbounded_String;
      --  Empty: sessions live in the body's memory alone
      State_Busy_Ms  : Positive := 5_000;
      --  How long a turn waits for another body's turn on the same store
      State_Sync     : State_Durability := Normal;
      Cognition      : Cognition_Kind := Stub;
      Intender       : Intender_Kind := Rules;
      Sampling_Timeout_Ms : Positive := Default_Sampling_Timeout_Ms;
      Turn_Deadline_Ms    : Positive := Default_Turn_Deadline_Ms;
      Sampling_Max_Tokens : Positive := Default_Sampling_Max_Tokens;
      --  Energy from the budget
      Energy          : Energy_Source := Fixture;
      Budget_Calls    : Positive := Default_Budget_Calls;
      Budget_Window_S : Positive := Default_Budget_Window_S;
      Budget_Tokens   : Natural := 0;
      --  0: tokens are not counted
      Recall         : Recall_Kind := Fixture;
      Show_Help      : Boolean := False;
      Show_Version   : Boolean := False;
   end record;

   function From_Command_Line return Settings;
   --  Every option that takes a value takes it as the next argument or
   --  attached after '=' (--organs FILE, --organs=FILE; the value is all
   --  after the first '='), and never an empty one.  Raises Usage_Error,
   --  naming the option, for an unknown option, a value missing, empty or
   --  not one the option takes, and a value attached to an option that
   --  takes none.

   function Default_Organs_Path return String;
   --  <prefix>/stubs/organs/default.json, where the executable is
   --  <prefix>/mafiabot_core/bin/mafiabot

   function Resolved_Hermes_Home (Self : Settings) return String;
   --  Where SOUL.md goes; "" when no home can be named

   Usage : constant String;

   Usage_Error : exception;

private

   LF : constant Character := ASCII.LF;

   Usage : constant String :=
     "usage: mafiabot [options]" & LF
     & "An MCP stdio server: each tools/call of `turn` runs one user turn"
     & " through the 23-step cycle." & LF
     & "Every option's value may also be attached: --organs=FILE." & LF & LF
     & "  --organs FILE          organ fixture (default: "
     & "stubs/organs/default.json of the checkout)" & LF
     & "  --thresholds CSV       8 pass thresholds in [0, 1], first 0, never"
     & " decreasing" & LF
     & "  --max-line-bytes N     longest accepted line (default 4194304)" & LF
     & "  --max-depth N          deepest accepted JSON nesting (default 64)"
     & LF
     & "  --max-elements N       most JSON elements in a line (default"
     & " 1000000)" & LF
     & "  --max-sessions N       sessions kept before LRU eviction (default"
     & " 10000)" & LF
     & "  --hermes-home DIR      where SOUL.md is written (default"
     & " $HERMES_HOME, else ~/.hermes)" & LF
     & "  --soul keep|replace|off  keep (default): write SOUL.md only where it"
     & " is missing, Hermes's" & LF
     & "                         default or the body's own unedited write;"
     & " replace: also replace" & LF
     & "                         the operator's, keeping it as"
     & " SOUL.md.before-mafiabot.<UTC time>;" & LF
     & "                         off: write nothing" & LF
     & "  --no-soul              the same as --soul off" & LF
     & "  --soul-state           print whose SOUL.md is there and what a boot"
     & " would do; exit" & LF
     & "  --soul-restore         put back what the body's SOUL.md replaced, if"
     & " unedited; exit" & LF
     & "  --text-block full|compact  a turn's text block: full (default): the"
     & " output and the whole" & LF
     & "                         result as JSON; compact: the output and a"
     & " one-line summary" & LF
     & "                         (structuredContent keeps the whole result)"
     & LF
     & "  --state FILE           keep sessions in the SQLite file FILE,"
     & " shared with other bodies" & LF
     & "                         (default: in memory, gone when the body"
     & " exits)" & LF
     & "  --state postgresql://...  keep them in a PostgreSQL database"
     & " (mafiabot-dynamic only;" & LF
     & "                         the password in PGPASSFILE, not the URL)"
     & LF
     & "  --state-busy-ms N      how long a turn waits for another body's"
     & " lock (default 5000)" & LF
     & "  --state-sync normal|full  normal (default): a committed turn"
     & " survives a kill of the body;" & LF
     & "                         full: also a power loss (an fsync per"
     & " turn)" & LF
     & "  --cognition stub|sampling  stub (default): the fixture's cognition;"
     & " sampling: each pass" & LF
     & "                         and the synthesis asked of the client's model"
     & " (MCP sampling)" & LF
     & "  --intent rules|model   rules (default): the fixture's intent rules;"
     & " model: the intent" & LF
     & "                         asked of the client's model (needs"
     & " --cognition sampling)" & LF
     & "  --sampling-timeout-ms N  per sampling request (default 20000)" & LF
     & "  --turn-deadline-ms N   per turn, all its sampling requests (default"
     & " 50000)" & LF
     & "  --sampling-max-tokens N  per sampling request (default 256)" & LF
     & "  --energy fixture|budget  fixture (default): the fixture's energy;"
     & " budget: E is the share" & LF
     & "                         of the session's model budget left"
     & " (docs/energy.md)" & LF
     & "  --budget-calls N       model calls a session may make in a window"
     & " (default" & Natural'Image (Default_Budget_Calls) & ";" & LF
     & "                         at least one full turn's"
     & Energy_Gate.Full_Turn_Calls (Asks_Intent => False)'Image & ","
     & Energy_Gate.Full_Turn_Calls (Asks_Intent => True)'Image
     & " with --intent model)" & LF
     & "  --budget-window-s S    the sliding window, in seconds (default"
     & Natural'Image (Default_Budget_Window_S) & ")" & LF
     & "  --budget-tokens N      also tokens a session may spend in a window,"
     & " as the client" & LF
     & "                         reports them (default: not counted)" & LF
     & "  --recall fixture|relevance  fixture (default): the fixture's recall;"
     & " relevance: the" & LF
     & "                         session's earlier turns ranked by BM25"
     & " against the input" & LF
     & "  --version, --help" & LF;

end Body_Config;
