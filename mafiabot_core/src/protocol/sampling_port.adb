with Body_Log;
with Stdio_Channel;

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

   procedure Write_Request
     (Json          : in out Json_Text.Builder;
      Id            : String;
      System_Prompt : String;
      Prompt        : String;
      Max_Tokens    : Positive) is
   begin
      Start_With_Id (Json, Id);
      Json.Text_Field ("method", Method_Name);
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

         --  A content block {"type":"text","text":...}: its text added
         function Took_Text (Block : Node_Id) return Boolean is
            Text_Node : constant Node_Id := Member_Of (Block, "text");
            Type_Node : constant Node_Id := Member_Of (Block, "type");
         begin
            if Is_Text (Type_Node)
              and then Text (Self.Reader, Line, Type_Node) = "text"
              and then Is_Text (Text_Node)
            then
               Organs.Texts.Add (Answer, Text (Self.Reader, Line, Text_Node));
               return True;
            end if;
            return False;
         end Took_Text;
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
               Content : constant Node_Id := Member_Of (Result, "content");
               Model   : constant Node_Id := Member_Of (Result, "model");
               Took    : Boolean := False;
            begin
               if Is_Text (Model) then
                  Port.Set_Model (Facts, Text (Self.Reader, Line, Model));
               end if;
               if Is_Object (Content) then
                  Took := Took_Text (Content);
               elsif Content /= No_Node
                 and then Kind (Self.Reader, Content) = Array_Value
               then
                  declare
                     Block : Node_Id := First_Child (Self.Reader, Content);
                  begin
                     while Block /= No_Node loop
                        Took := Took_Text (Block) or else Took;
                        Block := Next_Sibling (Self.Reader, Block);
                     end loop;
                  end;
               end if;
               if Took then
                  Facts.Status := Port.Answered;
               else
                  Fail (Port.Failed, "the result holds no text content");
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

end Sampling_Port;
