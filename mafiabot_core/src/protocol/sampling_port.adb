with GNAT.SHA256;
with Organs.Cognition;
with Session_Repositories;
with Utf8;

package body Sampling_Port is

   use Json_Reader;
   use type Monotonic.Instant;
   use type Organs.Model_Port.Reach;

   package Port renames Organs.Model_Port;

   Method_Name : constant String := "sampling/createMessage";

   Last_Id : Natural := 0;
   --  The body's id space: the id of the last request it sent, whatever
   --  turn sent it, so a late answer never matches a later request

   function Image (Value : Natural) return String is
      Spelled : constant String := Value'Image;
   begin
      return Spelled (Spelled'First + 1 .. Spelled'Last);
   end Image;

   No_Text : constant String := "the result holds no text content";

   --  The text of a CreateMessageResult (Result, an object): its content,
   --  a text block or a list of blocks whose text blocks are taken in
   --  order, each given to Add; Took says whether there was any.  Model is
   --  the result's model member (No_Node for none).
   procedure Read_Result
     (Reader : Document;
      Line   : String;
      Result : Node_Id;
      Add    : not null access procedure (Text : String);
      Model  : out Node_Id;
      Took   : out Boolean)
   with Pre => Kind (Reader, Result) = Object_Value
   is
      function Member_Of (Object : Node_Id; Name : String) return Node_Id is
        (if Object /= No_Node and then Kind (Reader, Object) = Object_Value
         then Member (Reader, Line, Object, Name) else No_Node);

      function Is_Text (Node : Node_Id) return Boolean is
        (Node /= No_Node and then Kind (Reader, Node) = String_Value);

      --  A content block {"type":"text","text":...}: its text added
      procedure Take_Block (Block : Node_Id) is
         Text_Node : constant Node_Id := Member_Of (Block, "text");
         Type_Node : constant Node_Id := Member_Of (Block, "type");
      begin
         if Is_Text (Type_Node)
           and then Text (Reader, Line, Type_Node) = "text"
           and then Is_Text (Text_Node)
         then
            Add (Text (Reader, Line, Text_Node));
            Took := True;
         end if;
      end Take_Block;

      Content : constant Node_Id := Member_Of (Result, "content");
   begin
      Took := False;
      Model := Member_Of (Result, "model");
      if Content = No_Node then
         null;
      elsif Kind (Reader, Content) = Object_Value then
         Take_Block (Content);
      elsif Kind (Reader, Content) = Array_Value then
         declare
            Block : Node_Id := First_Child (Reader, Content);
         begin
            while Block /= No_Node loop
               Take_Block (Block);
               Block := Next_Sibling (Reader, Block);
            end loop;
         end;
      end if;
   end Read_Result;

   procedure Open
     (Self          : in out Channel_Port;
      Reach         : Organs.Model_Port.Reach;
      Turn_Id       : String;
      Turn_Deadline : Monotonic.Instant) is
   begin
      Self.Reach := Reach;
      Ada.Strings.Unbounded.Set_Unbounded_String (Self.Turn_Id, Turn_Id);
      Self.Turn_Deadline := Turn_Deadline;
      Self.Cancelled := False;
      Self.Closed := False;
   end Open;

   procedure Send (Self : in out Channel_Port) is
      procedure Write (Message : String) is
      begin
         Self.Client.Send (Message);
      end Write;
   begin
      Self.Message.End_Line;
      Self.Message.Query (Write'Access);
   end Send;

   --  {"jsonrpc":"2.0","id":Id, -- a request's method, a response's result
   --  or error comes next
   procedure Start_With_Id (Json : in out Json_Text.Builder; Id : String) is
   begin
      Json.Reset;
      Json.Start_Object;
      Json.Text_Field ("jsonrpc", "2.0");
      Json.Raw_Field ("id", Id);
   end Start_With_Id;

   --  Tell the client the body no longer waits for request Id
   procedure Cancel_Request
     (Self : in out Channel_Port; Id : String; Reason : String) is
   begin
      Self.Message.Reset;
      Self.Message.Start_Object;
      Self.Message.Text_Field ("jsonrpc", "2.0");
      Self.Message.Text_Field ("method", "notifications/cancelled");
      Self.Message.Key ("params");
      Self.Message.Start_Object;
      Self.Message.Raw_Field ("requestId", Id);
      Self.Message.Text_Field ("reason", Reason);
      Self.Message.End_Object;
      Self.Message.End_Object;
      Send (Self);
   end Cancel_Request;

   --  The params of a sampling/createMessage asking Prompt
   procedure Write_Params
     (Json          : in out Json_Text.Builder;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive) is
   begin
      Json.Key ("params");
      Json.Start_Object;
      Json.Key ("messages");
      Json.Start_Array;
      Json.Start_Object;
      Json.Text_Field ("role", "user");
      Json.Key ("content");
      Json.Start_Object;
      Json.Text_Field ("type", "text");
      Json.Text_Field ("text", Prompt);
      Json.End_Object;
      Json.End_Object;
      Json.End_Array;
      Json.Text_Field ("systemPrompt", System_Prompt);
      Json.Text_Field ("includeContext", "none");
      Json.Int_Field ("maxTokens", Long_Long_Integer (Max_Tokens));
      Json.End_Object;
   end Write_Params;

   procedure Write_Request
     (Json          : in out Json_Text.Builder;
      Id            : String;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive) is
   begin
      Start_With_Id (Json, Id);
      Json.Text_Field ("method", Method_Name);
      Write_Params (Json, System_Prompt, Prompt, Max_Tokens);
      Json.End_Object;
   end Write_Request;

   overriding procedure Ask
     (Self          : in out Channel_Port;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Monotonic.Instant;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Organs.Model_Port.Answer_Facts)
   is
      Until_Time : constant Monotonic.Instant :=
        (if Deadline < Self.Turn_Deadline then Deadline
         else Self.Turn_Deadline);
      Started    : Monotonic.Instant;
      Done       : Boolean := False;
      Id         : constant String := Image (Last_Id + 1);

      procedure Fail (Status : Port.Ask_Status; Why : String) is
      begin
         Facts.Status := Status;
         Port.Set_Error (Facts, Why);
         Done := True;
      end Fail;

      --  The response to the pending request: its result or error member
      procedure Read_Response
        (Reader : Document; Line : String; Result, Error : Node_Id)
      is
         function Is_Object (Node : Node_Id) return Boolean is
           (Node /= No_Node and then Kind (Reader, Node) = Object_Value);

         function Member_Of (Object : Node_Id; Name : String) return Node_Id
         is (if Is_Object (Object) then Member (Reader, Line, Object, Name)
             else No_Node);

         function Is_Text (Node : Node_Id) return Boolean is
           (Node /= No_Node and then Kind (Reader, Node) = String_Value);

         procedure Add (Text : String) is
         begin
            Organs.Texts.Add (Answer, Text);
         end Add;
      begin
         Done := True;
         if Error /= No_Node then
            declare
               Code    : constant Node_Id := Member_Of (Error, "code");
               Message : constant Node_Id := Member_Of (Error, "message");
            begin
               Fail (Port.Failed,
                     "the client answered error "
                     & (if Code = No_Node then "(no code)"
                        else Raw (Reader, Line, Code))
                     & (if Is_Text (Message)
                        then ": " & Text (Reader, Line, Message) else ""));
            end;
         elsif not Is_Object (Result) then
            Fail (Port.Failed, "the response's result is not an object");
         else
            declare
               Model : Node_Id;
               Took  : Boolean;
            begin
               Read_Result (Reader, Line, Result, Add'Access, Model, Took);
               if Is_Text (Model) then
                  Port.Set_Model (Facts, Text (Reader, Line, Model));
               end if;
               if Took then
                  Facts.Status := Port.Answered;
               else
                  Fail (Port.Failed, No_Text);
               end if;
            end;
         end if;
      end Read_Response;

      Event : Wait_Event;
   begin
      Port.Clear (Facts);
      if Self.Reach /= Port.Reachable then
         Port.Set_Error (Facts, "no model to ask");
         return;
      elsif Self.Cancelled then
         Facts.Status := Port.Cancelled;
         Port.Set_Error (Facts, "the client cancelled the turn");
         return;
      elsif Self.Closed then
         Port.Set_Error (Facts, "stdin is closed: no client to answer");
         return;
      elsif Monotonic.Now >= Self.Turn_Deadline then
         Facts.Status := Port.Timed_Out;
         Port.Set_Error (Facts, "the turn's deadline passed before this"
                         & " request (--turn-deadline-ms)");
         return;
      end if;

      Last_Id := Last_Id + 1;
      Write_Request (Self.Message, Id, System_Prompt, Prompt, Max_Tokens);
      Send (Self);
      Started := Monotonic.Now;
      while not Done loop
         Self.Lines.Serve_While_Waiting
           (Pending_Id => Id,
            Turn_Id    => Ada.Strings.Unbounded.To_String (Self.Turn_Id),
            Deadline   => Until_Time,
            Take       => Read_Response'Access,
            Event      => Event);
         case Event is
            when Served | Answered =>
               null;
            when Turn_Cancelled =>
               Self.Cancelled := True;
               Fail (Port.Cancelled, "the client cancelled the turn");
               Cancel_Request (Self, Id, "the turn was cancelled");
            when Not_Json =>
               Fail (Port.Failed, "a line that is not JSON came while the"
                     & " response was awaited");
            when Oversized =>
               Fail (Port.Failed, "a line past --max-line-bytes came while"
                     & " the response was awaited");
            when Timed_Out =>
               Fail (Port.Timed_Out,
                     (if Until_Time = Self.Turn_Deadline
                      then "no response by the turn's deadline"
                           & " (--turn-deadline-ms)"
                      else "no response within --sampling-timeout-ms"));
               Cancel_Request (Self, Id, "timed out");
            when Input_Closed =>
               Self.Closed := True;
               Fail (Port.Failed, "stdin closed while the response was"
                     & " awaited");
         end case;
      end loop;
      Facts.Latency_Us := Natural
        (Monotonic.Instant'Min (Monotonic.Now - Started,
                                Monotonic.Instant (Natural'Last)));
   end Ask;

   ---------------------------------------------------------------------
   --  The input-required form

   use Ada.Strings.Unbounded;
   use type Port.Ask_Status;
   use type Turn_Thinkers.Client_Reach;

   Max_Replayed_Bytes : constant := Organs.Cognition.Max_Synthesis_Bytes;
   --  An answer is kept, and echoed by the client, up to the longest text
   --  the cycle keeps of one (a thought keeps less)

   function Key_Of_Call (Number : Positive) return String is
     ("call-" & Image (Number));

   --  The MAC of a state's answers (Payload, as written) for the call of
   --  Call_Key: HMAC-SHA-256 under the body's secret, in hex
   function Mac_Of (Self : Replay_Port; Call_Key, Payload : String)
     return String
   is
      Context : GNAT.SHA256.Context :=
        GNAT.SHA256.HMAC_Initial_Context (To_String (Self.Secret));
   begin
      GNAT.SHA256.Update (Context, Call_Key);
      GNAT.SHA256.Update (Context, String'(1 => ASCII.LF));
      GNAT.SHA256.Update (Context, Payload);
      return GNAT.SHA256.Digest (Context);
   end Mac_Of;

   --  Whether two MACs are equal, in a time that does not depend on where
   --  they differ
   function Same_Mac (Given, Made : String) return Boolean is
      Differ : Boolean := Given'Length /= Made'Length;
   begin
      if not Differ then
         for Offset in 0 .. Made'Length - 1 loop
            Differ := Differ
              or else Given (Given'First + Offset) /= Made (Made'First + Offset);
         end loop;
      end if;
      return not Differ;
   end Same_Mac;

   procedure Set_Secret (Self : in out Replay_Port; Secret : String) is
   begin
      Self.Secret := To_Unbounded_String (Secret);
      Self.Key_Id :=
        GNAT.SHA256.Digest ("mafiabot requestState key" & ASCII.LF & Secret)
          (1 .. Key_Id_Length);
   end Set_Secret;

   --  Text cut to Max_Replayed_Bytes on a character boundary
   function Kept (Text : String) return Unbounded_String is
     (To_Unbounded_String
        (Text (Text'First .. Text'First - 1
               + Utf8.Prefix_Length (Text, Max_Replayed_Bytes))));

   procedure Resume
     (Self      : in out Replay_Port;
      Call_Key  : String;
      State     : String;
      Responses : String;
      Limits    : Input_Guard.Limits;
      Valid     : out Boolean)
   is
   begin
      Self.Call_Key := To_Unbounded_String (Call_Key);
      Self.Answered := 0;
      Self.Asked := 0;
      Self.Waiting := False;
      Self.Refused := Not_Refused;
      Self.First_Round := (if Self.Clock = null then 0 else Self.Clock.Now);
      Valid := True;
      if State /= "" then
         Self.Reader.Parse (State, Limits);
         Valid := Self.Reader.Is_Valid
           and then Kind (Self.Reader, Self.Reader.Root) = Object_Value;
         if not Valid then
            Self.Refused := Not_Given;
            return;
         end if;
         declare
            Root    : constant Node_Id := Self.Reader.Root;
            function Text_Of (Name : String) return String is
              (if Member (Self.Reader, State, Root, Name) /= No_Node
                 and then Kind (Self.Reader, Member (Self.Reader, State, Root, Name))
                          = String_Value
               then Text (Self.Reader, State, Member (Self.Reader, State, Root, Name))
               else "");
            Payload : constant Node_Id :=
              Member (Self.Reader, State, Root, "state");
            Answers : constant Node_Id :=
              (if Payload /= No_Node
                 and then Kind (Self.Reader, Payload) = Object_Value
               then Member (Self.Reader, State, Payload, "answers")
               else No_Node);
            Each    : Node_Id;
         begin
            if Text_Of ("key") /= Self.Key_Id then
               Self.Refused :=
                 (if Text_Of ("key") = "" then Not_Given else Other_Key);
               Valid := False;
               return;
            end if;
            Valid := Answers /= No_Node
              and then Kind (Self.Reader, Answers) = Array_Value
              and then Same_Mac
                (Text_Of ("mac"),
                 Mac_Of (Self, Call_Key, Raw (Self.Reader, State, Payload)));
            if not Valid then
               Self.Refused := Not_Given;
               return;
            end if;
            --  Budget: the first round's time, as this body wrote it (a
            --  state without one, or one past Now, senses at Now)
            declare
               First : constant Node_Id :=
                 Member (Self.Reader, State, Payload, "first_round_ms");
               Digits_Of : constant String :=
                 (if First /= No_Node
                    and then Kind (Self.Reader, First) = String_Value
                  then Text (Self.Reader, State, First) else "");
            begin
               if Digits_Of'Length in 1 .. 18
                 and then (for all C of Digits_Of => C in '0' .. '9')
               then
                  Self.First_Round := Wall_Clocks.Epoch_Ms'Min
                    (Self.First_Round, Wall_Clocks.Epoch_Ms'Value (Digits_Of));
               end if;
            end;
            Each := First_Child (Self.Reader, Answers);
            while Each /= No_Node loop
               declare
                  function Text_Member (Name : String) return String is
                    (if Kind (Self.Reader, Each) = Object_Value
                       and then Member (Self.Reader, State, Each, Name) /= No_Node
                       and then Kind (Self.Reader,
                                      Member (Self.Reader, State, Each, Name))
                                = String_Value
                     then Text (Self.Reader, State,
                                Member (Self.Reader, State, Each, Name))
                     else "");
                  Status : constant String := Text_Member ("status");
               begin
                  if Self.Answered = Max_Replayed_Calls
                    or else Status not in "answered" | "failed"
                  then
                     Self.Refused := Not_Given;
                     Valid := False;
                     return;
                  end if;
                  Self.Answered := Self.Answered + 1;
                  Self.Answers (Self.Answered) :=
                    (Status => (if Status = "answered" then Port.Answered
                                else Port.Failed),
                     Model  => Kept (Text_Member ("model")),
                     Text   => Kept (Text_Member ("text")));
               end;
               Each := Next_Sibling (Self.Reader, Each);
            end loop;
         end;
      end if;

      --  The answer to the call the last round asked, if it came
      if Responses /= "" and then Self.Answered < Max_Replayed_Calls then
         Self.Reader.Parse (Responses, Limits);
         if Self.Reader.Is_Valid
           and then Kind (Self.Reader, Self.Reader.Root) = Object_Value
         then
            declare
               Response : constant Node_Id :=
                 Member (Self.Reader, Responses, Self.Reader.Root,
                         Key_Of_Call (Self.Answered + 1));
               Answer   : Replayed;
               Model    : Node_Id;
               Took     : Boolean := False;

               procedure Add (Text : String) is
               begin
                  if Length (Answer.Text) < Max_Replayed_Bytes then
                     Append (Answer.Text, Text);
                  end if;
               end Add;
            begin
               if Response /= No_Node
                 and then Kind (Self.Reader, Response) = Object_Value
               then
                  Read_Result (Self.Reader, Responses, Response, Add'Access,
                               Model, Took);
                  if Model /= No_Node
                    and then Kind (Self.Reader, Model) = String_Value
                  then
                     Answer.Model :=
                       Kept (Text (Self.Reader, Responses, Model));
                  end if;
               end if;
               if Took then
                  Answer.Status := Port.Answered;
                  Answer.Text := Kept (To_String (Answer.Text));
               else
                  Answer.Status := Port.Failed;
                  Answer.Text := To_Unbounded_String
                    (if Response = No_Node
                     then "inputResponses has no " & Key_Of_Call
                            (Self.Answered + 1)
                     else No_Text);
               end if;
               Self.Answered := Self.Answered + 1;
               Self.Answers (Self.Answered) := Answer;
            end;
         end if;
      end if;
   end Resume;

   overriding procedure Ask
     (Self          : in out Replay_Port;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive;
      Deadline      : Monotonic.Instant;
      Answer        : in out Organs.Texts.Store;
      Facts         : out Organs.Model_Port.Answer_Facts)
   is
      pragma Unreferenced (Deadline);
   begin
      Port.Clear (Facts);
      Self.Asked := Self.Asked + 1;
      if Self.Asked <= Self.Answered then
         declare
            Given : Replayed renames Self.Answers (Self.Asked);
         begin
            Facts.Status := Given.Status;
            Port.Set_Model (Facts, To_String (Given.Model));
            if Given.Status = Port.Answered then
               Organs.Texts.Add (Answer, To_String (Given.Text));
            else
               Port.Set_Error (Facts, To_String (Given.Text));
            end if;
         end;
      else
         if not Self.Waiting then
            Self.Waiting := True;
            Self.System_Prompt := To_Unbounded_String (System_Prompt);
            Self.Prompt := To_Unbounded_String (Prompt);
            Self.Max_Tokens := Max_Tokens;
         end if;
         Port.Set_Error (Facts, "awaiting the client's answer (input-required)");
      end if;
   end Ask;

   function Input_Requests (Self : Replay_Port) return String is
      Json : Json_Text.Builder;
   begin
      Json.Start_Object;
      Json.Key (Key_Of_Call (Self.Answered + 1));
      Json.Start_Object;
      Json.Text_Field ("method", Method_Name);
      Write_Params (Json, To_String (Self.System_Prompt),
                    To_String (Self.Prompt), Self.Max_Tokens);
      Json.End_Object;
      Json.End_Object;
      return Json.Image;
   end Input_Requests;

   function Request_State (Self : Replay_Port) return String is
      State : Json_Text.Builder;
      Bound : Json_Text.Builder;
   begin
      State.Start_Object;
      if Self.Clock /= null then
         declare
            Spelled : constant String := Self.First_Round'Image;
         begin
            State.Text_Field
              ("first_round_ms", Spelled (Spelled'First + 1 .. Spelled'Last));
         end;
      end if;
      State.Key ("answers");
      State.Start_Array;
      for Given of Self.Answers (1 .. Self.Answered) loop
         State.Start_Object;
         State.Text_Field
           ("status", (if Given.Status = Port.Answered then "answered"
                       else "failed"));
         State.Text_Field ("model", To_String (Given.Model));
         State.Text_Field ("text", To_String (Given.Text));
         State.End_Object;
      end loop;
      State.End_Array;
      State.End_Object;
      --  The answers as written, and the MAC that binds them to the call
      Bound.Start_Object;
      Bound.Text_Field ("key", Self.Key_Id);
      Bound.Text_Field
        ("mac", Mac_Of (Self, To_String (Self.Call_Key), State.Image));
      Bound.Key ("state");
      Bound.Raw (State.Image);
      Bound.End_Object;
      return Bound.Image;
   end Request_State;

   function Refusal (Self : Replay_Port) return String is
     (case Self.Refused is
         when Not_Refused => "",
         when Not_Given =>
           "requestState is not one the body gave for this call",
         when Other_Key =>
           "requestState was given under another key: by an earlier run of"
           & " the body (one without --state draws a new key at each start)"
           & " or another store's; send the call again without"
           & " requestState");

   ---------------------------------------------------------------------
   --  The thinker

   procedure Connect
     (Self             : in out Thinker;
      Client           : not null Client_Channels.Channel_Access;
      Lines            : not null Line_Server_Access;
      Limits           : Input_Guard.Limits;
      Turn_Deadline_Ms : Positive) is
   begin
      Self.Live.Client := Client;
      Self.Live.Lines := Lines;
      Self.Limits := Limits;
      Self.Turn_Deadline := Turn_Deadline_Ms;
   end Connect;

   overriding procedure Start_Turn
     (Self        : in out Thinker;
      Reach       : Turn_Thinkers.Client_Reach;
      Call_Id     : String;
      State       : String;
      Responses   : String;
      Session_Key : String;
      Input       : String;
      Plan        : out Turn_Thinkers.Turn_Plan)
   is
      use Turn_Thinkers;
      Valid : Boolean;
   begin
      Self.Last := Reach;
      case Reach is
         when Rounds =>
            --  One round of the client's per call, each on a copy of the
            --  session but the last
            Self.Replay.Resume
              (Call_Key  => Session_Key & ASCII.LF & Input,
               State     => State,
               Responses => Responses,
               Limits    => Self.Limits,
               Valid     => Valid);
            if Self.Rounds_Clock /= null then
               Self.Rounds_Clock.Pin (Self.Replay.First_Round);
            end if;
            Plan := (Valid     => Valid,
                     Problem   => To_Unbounded_String (Self.Replay.Refusal),
                     Port      => Self.Replay'Unchecked_Access,
                     Length    => Session_Repositories.Short,
                     Tentative => True);
         when Live | None =>
            if Self.Rounds_Clock /= null then
               Self.Rounds_Clock.Unpin;
            end if;
            Self.Live.Open
              (Reach         =>
                 (if Reach = Live then Port.Reachable
                  else Port.No_Capability),
               Turn_Id       => Call_Id,
               Turn_Deadline => Monotonic.After (Self.Turn_Deadline));
            --  Up to the turn's deadline: too long to hold a store's write
            --  lock from the other bodies meanwhile
            Plan := (Valid     => True,
                     Problem   => Null_Unbounded_String,
                     Port      => Self.Live'Unchecked_Access,
                     Length    =>
                       (if Reach = Live then Session_Repositories.Long
                        else Session_Repositories.Short),
                     Tentative => False);
      end case;
   end Start_Turn;

   procedure Set_Secret (Self : in out Thinker; Secret : String) is
   begin
      Self.Replay.Set_Secret (Secret);
   end Set_Secret;

   procedure Pin_Rounds_On
     (Self : in out Thinker; Clock : not null access Wall_Clocks.Turn_Clock)
   is
   begin
      Self.Rounds_Clock := Clock;
      Self.Replay.Clock := Clock;
   end Pin_Rounds_On;

   overriding function Ending (Self : Thinker) return Turn_Thinkers.Round_End
   is
     (case Self.Last is
         when Turn_Thinkers.Rounds =>
           (if Self.Replay.Needs_Input then Turn_Thinkers.Asked_Client
            else Turn_Thinkers.Thought),
         when Turn_Thinkers.Live | Turn_Thinkers.None =>
           (if Self.Live.Was_Cancelled then Turn_Thinkers.Call_Cancelled
            else Turn_Thinkers.Thought));

   overriding function Pending_Requests (Self : Thinker) return String is
     (if Self.Last = Turn_Thinkers.Rounds and then Self.Replay.Needs_Input
      then Self.Replay.Input_Requests else "");

   overriding function Pending_State (Self : Thinker) return String is
     (if Self.Last = Turn_Thinkers.Rounds and then Self.Replay.Needs_Input
      then Self.Replay.Request_State else "");

end Sampling_Port;
