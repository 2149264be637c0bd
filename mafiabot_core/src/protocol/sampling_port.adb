with Body_Log;
with Fnv_Hash;
with Organs.Cognition;
with Stdio_Channel;
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
      Turn_Deadline : Monotonic.Instant;
      Limits        : Input_Guard.Limits) is
   begin
      Self.Reach := Reach;
      Ada.Strings.Unbounded.Set_Unbounded_String (Self.Turn_Id, Turn_Id);
      Self.Turn_Deadline := Turn_Deadline;
      Self.Limits := Limits;
      Self.Cancelled := False;
      Self.Closed := False;
   end Open;

   procedure Send (Json : in out Json_Text.Builder) is
   begin
      Json.End_Line;
      Json.Query (Stdio_Channel.Send'Access);
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
      Send (Self.Message);
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

      --  The response to the pending request, Members its envelope
      procedure Read_Response (Line : String; Result, Error : Node_Id) is
         function Is_Object (Node : Node_Id) return Boolean is
           (Node /= No_Node and then Kind (Self.Reader, Node) = Object_Value);

         function Member_Of (Object : Node_Id; Name : String) return Node_Id
         is (if Is_Object (Object) then Member (Self.Reader, Line, Object, Name)
             else No_Node);

         function Is_Text (Node : Node_Id) return Boolean is
           (Node /= No_Node and then Kind (Self.Reader, Node) = String_Value);

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
                        else Raw (Self.Reader, Line, Code))
                     & (if Is_Text (Message)
                        then ": " & Text (Self.Reader, Line, Message) else ""));
            end;
         elsif not Is_Object (Result) then
            Fail (Port.Failed, "the response's result is not an object");
         else
            declare
               Model : Node_Id;
               Took  : Boolean;
            begin
               Read_Result (Self.Reader, Line, Result, Add'Access, Model, Took);
               if Is_Text (Model) then
                  Port.Set_Model (Facts, Text (Self.Reader, Line, Model));
               end if;
               if Took then
                  Facts.Status := Port.Answered;
               else
                  Fail (Port.Failed, No_Text);
               end if;
            end;
         end if;
      end Read_Response;

      --  Answer a request set aside for want of room: it would never be
      procedure Refuse_Busy (Line : String; Id_Node : Node_Id) is
      begin
         Start_With_Id (Self.Message, Raw (Self.Reader, Line, Id_Node));
         Self.Message.Key ("error");
         Self.Message.Start_Object;
         Self.Message.Int_Field ("code", Busy_Code);
         Self.Message.Text_Field
           ("message", "Server busy:" & Stdio_Channel.Max_Deferred_Lines'Image
            & " messages already wait for the turn in flight");
         Self.Message.End_Object;
         Self.Message.End_Object;
         Send (Self.Message);
      end Refuse_Busy;

      procedure Set_Aside (Line : String) is
      begin
         if not Stdio_Channel.Defer (Line) then
            Body_Log.Warning ("a message came while a sampling request"
                              & " waited, and the queue is full: dropped");
         end if;
      end Set_Aside;

      procedure Take (Line : String) is
      begin
         Self.Reader.Parse (Line, Self.Limits);
         if not Self.Reader.Is_Valid then
            --  Answered -32700 once the turn is, as any such line
            Set_Aside (Line);
            Fail (Port.Failed, "a line that is not JSON came while the"
                  & " response was awaited");
            return;
         elsif Kind (Self.Reader, Self.Reader.Root) /= Object_Value then
            Set_Aside (Line);
            return;
         end if;
         declare
            Root    : constant Node_Id := Self.Reader.Root;
            Id_Node : constant Node_Id :=
              Member (Self.Reader, Line, Root, "id");
            Method  : constant Node_Id :=
              Member (Self.Reader, Line, Root, "method");
            Params  : constant Node_Id :=
              Member (Self.Reader, Line, Root, "params");
            Result  : constant Node_Id :=
              Member (Self.Reader, Line, Root, "result");
            Error   : constant Node_Id :=
              Member (Self.Reader, Line, Root, "error");
            Has_Valid_Id : constant Boolean :=
              Id_Node /= No_Node
              and then Kind (Self.Reader, Id_Node)
                       in Number_Value | String_Value;
            Name : constant String :=
              (if Method /= No_Node
                 and then Kind (Self.Reader, Method) = String_Value
               then Text (Self.Reader, Line, Method) else "");
            Params_Object : constant Boolean :=
              Params /= No_Node and then Kind (Self.Reader, Params) = Object_Value;
            Version : constant Node_Id :=
              Member (Self.Reader, Line, Root, "jsonrpc");
            Is_2_0  : constant Boolean :=
              Version /= No_Node
              and then Kind (Self.Reader, Version) = String_Value
              and then Text (Self.Reader, Line, Version) = "2.0";
         begin
            if Method = No_Node and then Has_Valid_Id
              and then (Result /= No_Node or else Error /= No_Node)
            then
               if Raw (Self.Reader, Line, Id_Node) = Id then
                  Read_Response (Line, Result, Error);
               else
                  Body_Log.Info ("ignored a response with id "
                                 & Raw (Self.Reader, Line, Id_Node)
                                 & ": no request of the body's waits for it");
               end if;
            elsif Name = "notifications/cancelled" and then Id_Node = No_Node
            then
               declare
                  Named : constant Node_Id :=
                    (if Params_Object
                     then Member (Self.Reader, Line, Params, "requestId")
                     else No_Node);
               begin
                  if Named /= No_Node
                    and then Raw (Self.Reader, Line, Named)
                             = Ada.Strings.Unbounded.To_String (Self.Turn_Id)
                  then
                     Self.Cancelled := True;
                     Fail (Port.Cancelled, "the client cancelled the turn");
                     Cancel_Request (Self, Id, "the turn was cancelled");
                  end if;
                  --  A cancel of anything else names no request in flight
               end;
            elsif Name = "ping" and then Has_Valid_Id and then Is_2_0
              and then (Params = No_Node
                        or else (Params_Object
                                 and then Member (Self.Reader, Line, Params,
                                                  "_meta") = No_Node))
            then
               Start_With_Id
                 (Self.Message, Raw (Self.Reader, Line, Id_Node));
               Self.Message.Key ("result");
               Self.Message.Start_Object;
               Self.Message.End_Object;
               Self.Message.End_Object;
               Send (Self.Message);
            elsif not Stdio_Channel.Defer (Line) then
               if Has_Valid_Id and then Method /= No_Node then
                  Refuse_Busy (Line, Id_Node);
               else
                  Body_Log.Warning ("a message came while a sampling request"
                                    & " waited, and the queue is full:"
                                    & " dropped");
               end if;
            end if;
         end;
      end Take;

      Outcome : Stdio_Channel.Wait_Outcome;
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
      Send (Self.Message);
      Started := Monotonic.Now;
      while not Done loop
         Stdio_Channel.Await_Line (Until_Time, Take'Access, Outcome);
         case Outcome is
            when Stdio_Channel.Got_Line =>
               null;
            when Stdio_Channel.Got_Overflow =>
               Fail (Port.Failed, "a line past --max-line-bytes came while"
                     & " the response was awaited");
            when Stdio_Channel.Timed_Out =>
               Fail (Port.Timed_Out,
                     (if Until_Time = Self.Turn_Deadline
                      then "no response by the turn's deadline"
                           & " (--turn-deadline-ms)"
                      else "no response within --sampling-timeout-ms"));
               Cancel_Request (Self, Id, "timed out");
            when Stdio_Channel.Input_Closed =>
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

   Max_Replayed_Bytes : constant := Organs.Cognition.Max_Synthesis_Bytes;
   --  An answer is kept, and echoed by the client, up to the longest text
   --  the cycle keeps of one (a thought keeps less)

   function Key_Of_Call (Number : Positive) return String is
     ("call-" & Image (Number));

   function Hash_Image (Call_Key : String) return String is
      use type Fnv_Hash.Hash;
      Digits_Of : constant String := "0123456789abcdef";
      Value     : Fnv_Hash.Hash := Fnv_Hash.Of_Text (Call_Key);
      Spelled   : String (1 .. 16);
   begin
      for Index in reverse Spelled'Range loop
         Spelled (Index) := Digits_Of (Natural (Value mod 16) + 1);
         Value := Value / 16;
      end loop;
      return Spelled;
   end Hash_Image;

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
      Self.Call_Hash := To_Unbounded_String (Hash_Image (Call_Key));
      Self.Answered := 0;
      Self.Asked := 0;
      Self.Waiting := False;
      Valid := True;
      if State /= "" then
         Self.Reader.Parse (State, Limits);
         Valid := Self.Reader.Is_Valid
           and then Kind (Self.Reader, Self.Reader.Root) = Object_Value;
         if not Valid then
            return;
         end if;
         declare
            Root    : constant Node_Id := Self.Reader.Root;
            Call    : constant Node_Id := Member (Self.Reader, State, Root, "call");
            Answers : constant Node_Id :=
              Member (Self.Reader, State, Root, "answers");
            Each    : Node_Id;
         begin
            Valid := Call /= No_Node
              and then Kind (Self.Reader, Call) = String_Value
              and then Text (Self.Reader, State, Call) = To_String (Self.Call_Hash)
              and then Answers /= No_Node
              and then Kind (Self.Reader, Answers) = Array_Value;
            if not Valid then
               return;
            end if;
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

   procedure Write_Input_Required
     (Self : Replay_Port; Json : in out Json_Text.Builder)
   is
      State : Json_Text.Builder;
   begin
      Json.Key ("inputRequests");
      Json.Start_Object;
      Json.Key (Key_Of_Call (Self.Answered + 1));
      Json.Start_Object;
      Json.Text_Field ("method", Method_Name);
      Write_Params (Json, To_String (Self.System_Prompt),
                    To_String (Self.Prompt), Self.Max_Tokens);
      Json.End_Object;
      Json.End_Object;
      State.Start_Object;
      State.Text_Field ("call", To_String (Self.Call_Hash));
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
      Json.Text_Field ("requestState", State.Image);
   end Write_Input_Required;

end Sampling_Port;
